package intake_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers/intake"
)

const postSecret = "intake-secret-0123456789"

func signDoc(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func TestPostIntake_ASignedDocumentBecomesOneObjective(t *testing.T) {
	t.Parallel()
	st := storetest.NewSQLite(t)
	var started []string
	obs := &fakeObserver{intake: map[string]int{}, commands: map[string]int{}}
	h := intake.PostHandler(intake.PostOptions{Store: st, Secret: func() string { return postSecret },
		Repositories: []string{"/srv/widgets"}, Observer: obs,
		Defaults: func(string) (float64, int) { return 3, 2 },
		Start: func(_ context.Context, o *domain.Objective) error {
			started = append(started, o.ObjectiveID)
			return nil
		}})
	post := func(body, sig string) (int, intake.Response) {
		r := httptest.NewRequest(http.MethodPost, intake.PathIntake, bytes.NewBufferString(body))
		if sig != "" {
			r.Header.Set(intake.SignatureHeader, sig)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var res intake.Response
		if rec.Code < 300 {
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
		}
		return rec.Code, res
	}
	count := func() int {
		objs, err := st.ListObjectives(context.Background(), store.ListObjectivesParams{})
		require.NoError(t, err)
		caps, err := st.ListCaptureBuffers(context.Background(), store.ListCaptureBuffersParams{})
		require.NoError(t, err)
		return len(objs) + len(caps)
	}
	doc := `{"source":"jira","external_id":"PROJ-123","kind":"objective","title":"Login fails on Safari",` +
		`"description":"Steps: open /login","acceptance_criteria":["works on Safari"],"repository":"/srv/widgets",` +
		`"url":"https://jira.example.com/browse/PROJ-123"}`

	code, _ := post(doc, "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = post(doc, signDoc("another-secret", doc))
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = post(doc, signDoc(postSecret, doc+" "))
	require.Equal(t, http.StatusUnauthorized, code, "the signature is of the body as sent")
	require.Zero(t, count(), "nothing written")

	code, first := post(doc, signDoc(postSecret, doc))
	require.Equal(t, http.StatusCreated, code)
	require.True(t, first.Created)
	require.Equal(t, "objective", first.Kind)
	code, again := post(doc, signDoc(postSecret, doc))
	require.Equal(t, http.StatusOK, code)
	require.False(t, again.Created)
	require.Equal(t, first.ObjectiveID, again.ObjectiveID)
	require.Equal(t, 1, count())
	require.Equal(t, []string{first.ObjectiveID}, started)
	o, err := st.GetObjective(context.Background(), first.ObjectiveID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusNew, o.Status, "it waits for approval like any objective")
	require.Equal(t, "https://jira.example.com/browse/PROJ-123", o.Provenance)
	require.Equal(t, []string{"works on Safari"}, o.AcceptanceCriteria)
	require.InDelta(t, 3, *o.BudgetUSD, 1e-9, "the repository's budget, as objective create gives it")
	require.Equal(t, 2, *o.Attempts)

	for _, bad := range []string{
		`{"source":"jira","external_id":"PROJ-9","kind":"objective","title":"x","repository":"/etc"}`,
		`{"source":"Jira Cloud","external_id":"PROJ-9","kind":"objective","title":"x"}`,
		`{"source":"jira","external_id":"PROJ-9","kind":"objective","title":"two\nlines"}`,
		`{"source":"jira","external_id":"PROJ-9","kind":"objective","title":"x","extra":1}`,
		`not json`,
	} {
		code, _ := post(bad, signDoc(postSecret, bad))
		require.Equal(t, http.StatusBadRequest, code, bad)
	}
	require.Equal(t, 1, count(), "a refused document writes nothing")

	capture := `{"source":"linear","external_id":"ENG-9","kind":"capture","title":"Flaky upload test"}`
	code, c := post(capture, signDoc(postSecret, capture))
	require.Equal(t, http.StatusCreated, code)
	require.NotEmpty(t, c.CaptureID)
	require.Equal(t, 2, count())
	require.Equal(t, 2, obs.count(obs.intake, "created"))
	require.Equal(t, 1, obs.count(obs.intake, "exists"))

	empty := intake.PostHandler(intake.PostOptions{Store: st, Secret: func() string { return "" }})
	r := httptest.NewRequest(http.MethodPost, intake.PathIntake, bytes.NewBufferString(doc))
	r.Header.Set(intake.SignatureHeader, signDoc("", doc))
	rec := httptest.NewRecorder()
	empty.ServeHTTP(rec, r)
	require.Equal(t, http.StatusUnauthorized, rec.Code, "no secret configured signs nothing")
}
