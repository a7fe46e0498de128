package triage_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
	"github.com/azolla/azolla/schemas"
)

func captures() []domain.CaptureBuffer {
	t0 := time.Date(2026, 11, 21, 17, 41, 58, 0, time.UTC)
	return []domain.CaptureBuffer{
		{CaptureBufferID: "cap-2", Source: "slack:#ops", Content: "Tidy the README\n- links work", Status: domain.CapturePending, CreatedAt: t0.Add(time.Minute), UpdatedAt: t0},
		{CaptureBufferID: "cap-3", Source: "cli", Content: " \n\t", Status: domain.CapturePending, CreatedAt: t0.Add(2 * time.Minute), UpdatedAt: t0},
		{CaptureBufferID: "cap-1", Source: "cli", Content: "The fetcher should retry ASAP by 2026-12-01\n- retries 3 times\nby 2026-02-30", Status: domain.CapturePending, CreatedAt: t0, UpdatedAt: t0},
	}
}

func request(t *testing.T, prompt string) diazotroph.Request {
	t.Helper()
	return diazotroph.Request{
		WorkOrder: domain.WorkOrder{WorkOrderID: "wo-triage-1", DiazotrophType: triage.Type},
		Snapshot:  domain.ContextSnapshot{ContextSnapshotID: "ctx-1", ObjectiveID: "triage-default", FullPromptText: prompt},
		Budget:    time.Minute,
	}
}

func TestTriage_ExecuteProposesOnePerCaptureThroughTheRegistry(t *testing.T) {
	t.Parallel()
	prompt, err := triage.EncodeInput(triage.NewInput(captures()))
	require.NoError(t, err)
	// The snapshot holding it is a valid record.
	require.NoError(t, schemas.Validate(schemas.ContextSnapshot, domain.ContextSnapshot{
		ContextSnapshotID: "ctx-1", ObjectiveID: "triage-default", FullPromptText: prompt, CreatedAt: time.Now().UTC(),
	}))

	d, err := diazotroph.NewRegistry(triage.Diazotroph{}).Lookup(triage.Type)
	require.NoError(t, err)
	res, err := d.Execute(t.Context(), request(t, prompt))
	require.NoError(t, err)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	require.Equal(t, "Triage: 2 proposed objective(s) from 3 capture(s)", res.Title)
	require.NoError(t, schemas.ValidateJSON(schemas.TriageProposal, []byte(res.Content)))
	require.Contains(t, res.Notes, `capture cap-1: "2026-02-30" is not a date, ignored`)
	require.Contains(t, res.Notes, "capture cap-3 skipped: capture has no non-empty line")

	var set triage.Set
	require.NoError(t, json.Unmarshal([]byte(res.Content), &set))
	due := time.Date(2026, 12, 1, 23, 59, 59, 0, time.UTC)
	require.Equal(t, triage.Set{
		Proposals: []triage.Proposal{
			{CaptureBufferID: "cap-1", Title: "The fetcher should retry ASAP by 2026-12-01", AcceptanceCriteria: []string{"retries 3 times"}, Urgency: "CRITICAL", DueAt: &due},
			{CaptureBufferID: "cap-2", Title: "Tidy the README", AcceptanceCriteria: []string{"links work"}, Urgency: "NORMAL"},
		},
		Skipped: []triage.Skipped{{CaptureBufferID: "cap-3", Reason: "capture has no non-empty line"}},
	}, set)

	// Deterministic: the same snapshot gives the same bundle.
	again, err := d.Execute(t.Context(), request(t, prompt))
	require.NoError(t, err)
	require.Equal(t, res, again)
}

func TestTriage_ExecuteRefusesASnapshotWithoutTriageInput(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"plain prompt":    "Add retry to the fetcher",
		"other format":    `{"format":"azolla.manifest_input/v1","captures":[]}`,
		"no captures":     `{"format":"azolla.triage_input/v1","captures":[]}`,
		"unknown field":   `{"format":"azolla.triage_input/v1","captures":[{"capture_buffer_id":"c","content":"x","colour":1}]}`,
		"duplicate id":    `{"format":"azolla.triage_input/v1","captures":[{"capture_buffer_id":"c","content":"x"},{"capture_buffer_id":"c","content":"y"}]}`,
		"trailing data":   `{"format":"azolla.triage_input/v1","captures":[{"capture_buffer_id":"c","content":"x"}]} {}`,
		"trailing brace":  `{"format":"azolla.triage_input/v1","captures":[{"capture_buffer_id":"c","content":"x"}]}}`,
		"capture without": `{"format":"azolla.triage_input/v1","captures":[{"content":"x"}]}`,
	}
	for name, prompt := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, err := triage.Diazotroph{}.Execute(t.Context(), request(t, prompt))
			require.ErrorIs(t, err, triage.ErrInvalidInput)
			require.Contains(t, err.Error(), "TRIAGE_DIAZOTROPH: workorder wo-triage-1: snapshot ctx-1: invalid triage input")
			require.Equal(t, diazotroph.Result{}, res)
		})
	}
}

func TestTriage_ExecuteRefusesACancelledContext(t *testing.T) {
	t.Parallel()
	prompt, err := triage.EncodeInput(triage.NewInput(captures()))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = triage.Diazotroph{}.Execute(ctx, request(t, prompt))
	require.ErrorIs(t, err, context.Canceled)
}

func TestTriage_InputRoundTripsThroughTheSnapshotText(t *testing.T) {
	t.Parallel()
	in := triage.NewInput(captures())
	text, err := triage.EncodeInput(in)
	require.NoError(t, err)
	back, err := triage.DecodeInput(text)
	require.NoError(t, err)
	require.Equal(t, in, back)
	require.Equal(t, triage.Capture{
		CaptureBufferID: "cap-2", Source: "slack:#ops", Content: "Tidy the README\n- links work",
		CreatedAt: time.Date(2026, 11, 21, 17, 42, 58, 0, time.UTC),
	}, back.Captures[0])
}
