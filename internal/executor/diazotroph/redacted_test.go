package diazotroph_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/redact"
)

const canary = "sk-canary-7731"

// leaky returns the canary in every field it may write, and in its error.
type leaky struct{ err error }

func (leaky) Type() string { return "LEAKY_DIAZOTROPH" }

func (l leaky) Execute(context.Context, diazotroph.Request) (diazotroph.Result, error) {
	return diazotroph.Result{Title: "t " + canary, Content: "c " + canary, Notes: "n " + canary,
		Metadata: domain.BundleMetadata{PRDescriptionDraft: "d " + canary, RunReport: &domain.RunReport{
			Model: "m " + canary, Summary: "s " + canary, SessionID: "i " + canary,
			Transcript: &domain.RunTranscript{Text: "x " + canary}}}, RunnerStatus: domain.RunnerOK}, l.err
}

func (l leaky) Check(context.Context, diazotroph.Check) (diazotroph.Verdict, error) {
	return diazotroph.Verdict{Reason: "gate said " + canary}, l.err
}

func TestRedacted_HidesSecretsInEverythingADiazotrophReturns(t *testing.T) {
	t.Parallel()
	r := redact.New(redact.Secret{Name: "OPENAI_API_KEY", Value: canary})
	d := diazotroph.Redacted(leaky{}, r)
	res, err := d.Execute(t.Context(), diazotroph.Request{})
	require.NoError(t, err)
	require.Equal(t, diazotroph.Result{Title: "t [redacted:OPENAI_API_KEY]", Content: "c [redacted:OPENAI_API_KEY]",
		Notes: "n [redacted:OPENAI_API_KEY]", Metadata: domain.BundleMetadata{PRDescriptionDraft: "d [redacted:OPENAI_API_KEY]",
			RunReport: &domain.RunReport{Model: "m [redacted:OPENAI_API_KEY]", Summary: "s [redacted:OPENAI_API_KEY]",
				SessionID: "i [redacted:OPENAI_API_KEY]", Transcript: &domain.RunTranscript{Text: "x [redacted:OPENAI_API_KEY]"}}},
		RunnerStatus: domain.RunnerOK}, res)
	c, ok := d.(diazotroph.Checker)
	require.True(t, ok, "a Checker stays a Checker")
	v, err := c.Check(t.Context(), diazotroph.Check{})
	require.NoError(t, err)
	require.Equal(t, "gate said [redacted:OPENAI_API_KEY]", v.Reason)
}

func TestRedacted_ErrorsKeepWhatTheyWrap(t *testing.T) {
	t.Parallel()
	d := diazotroph.Redacted(leaky{err: errors.Join(diazotroph.ErrMisconfigured, errors.New("run "+canary))},
		redact.New(redact.Secret{Name: "k", Value: canary}))
	_, err := d.Execute(t.Context(), diazotroph.Request{})
	require.ErrorIs(t, err, diazotroph.ErrMisconfigured)
	require.NotContains(t, err.Error(), canary)
}

func TestRedacted_WithoutSecretsIsTheDiazotrophItself(t *testing.T) {
	t.Parallel()
	d := leaky{}
	require.Equal(t, diazotroph.Diazotroph(d), diazotroph.Redacted(d, redact.New()))
}
