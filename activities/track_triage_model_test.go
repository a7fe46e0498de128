package activities_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// modelEndpoint is an OpenAI-compatible endpoint that answers each request
// with the next of its answers (the last one again when they run out), and
// keeps the user messages it was sent.
type modelEndpoint struct {
	mu      sync.Mutex
	answers []string
	inputs  []string
}

func (m *modelEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 2 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.inputs = append(m.inputs, req.Messages[1].Content)
	answer := m.answers[min(len(m.inputs), len(m.answers))-1]
	m.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]any{"model": "triager-1",
		"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"content": answer}}},
		"usage":   map[string]any{"prompt_tokens": 50, "completion_tokens": 10}})
}

func (m *modelEndpoint) asked() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.inputs)
}

// forEachModelTrackBackend runs test with TRIAGE_DIAZOTROPH on the openai
// route, asking an endpoint that gives answers in turn.
func forEachModelTrackBackend(t *testing.T, maxFailures int, answers []string, test func(t *testing.T, tb *testBundle, m *modelEndpoint)) {
	t.Helper()
	forEachTrackBackend(t, nil, func(t *testing.T, tb *testBundle) {
		m := &modelEndpoint{answers: answers}
		srv := httptest.NewServer(http.HandlerFunc(m.serve))
		t.Cleanup(srv.Close)
		client, err := patchgen.NewOpenAI(patchgen.OpenAIOptions{BaseURL: srv.URL, Model: "triager"})
		require.NoError(t, err)
		tb.steps.Diazotrophs = diazotroph.NewRegistry(tb.fake, manifest.Diazotroph{},
			triage.New(triage.Options{Model: triage.NewOpenAI(client), MaxFailures: maxFailures}))
		test(t, tb, m)
	})
}

// runTriage runs and gates the round that eventID schedules.
func (tb *testBundle) runTriage(t *testing.T, eventID string) activities.TrackGateResult {
	t.Helper()
	res := tb.scheduleTrack(t, eventID)
	require.Equal(t, domain.ReasonScheduled, res.Reason)
	wo := res.WorkOrder.WorkOrderID
	_, err := tb.steps.Run(t.Context(), activities.RunInput{WorkOrderID: wo})
	require.NoError(t, err)
	gate, err := tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: wo})
	require.NoError(t, err)
	return gate
}

func (tb *testBundle) requireAuditClean(t *testing.T) {
	t.Helper()
	rep, err := audit.Run(t.Context(), tb.store, storetest.T0.Add(time.Hour))
	require.NoError(t, err)
	require.Empty(t, rep.Violations)
}

const mergeSplitSkipAnswer = `{"proposals":[
 {"capture_buffer_id":"cap-1","merged_capture_buffer_ids":["cap-2"],"title":"Retry failed fetches","acceptance_criteria":["a failed fetch is retried 3 times"],"urgency":"HIGH"},
 {"capture_buffer_id":"cap-3","title":"Add a search box","acceptance_criteria":[],"urgency":"NORMAL"},
 {"capture_buffer_id":"cap-3","title":"Add search filters","acceptance_criteria":[],"urgency":"LOW"}],
 "skipped":[{"capture_buffer_id":"cap-4","reason":"duplicate of objective o-login"}]}`

func TestTrack_ModelRouteMergesSplitsAndSkipsIntoTheRightObjectivesOnce(t *testing.T) {
	forEachModelTrackBackend(t, 3, []string{mergeSplitSkipAnswer}, func(t *testing.T, tb *testBundle, m *modelEndpoint) {
		rec := &spentRecorder{}
		tb.observe(rec)
		login := storetest.Objective("o-login")
		login.Title = "Add a login page"
		require.NoError(t, tb.store.CreateObjective(t.Context(), login))
		ev := tb.capture(t, "cap-1", "fetches fail, retry them", time.Second)
		tb.capture(t, "cap-2", "retry the fetcher please", 2*time.Second)
		tb.capture(t, "cap-3", "search box, and filters for it", 3*time.Second)
		tb.capture(t, "cap-4", "a login page", 4*time.Second)

		gate := tb.runTriage(t, ev.EventID)
		require.Equal(t, domain.GatePass, gate.GateResult, gate.GateReason)
		require.Contains(t, gate.GateReason, "3 proposed objective(s) from 4 capture(s), each valid; 1 capture(s) merged")
		merged, first, second := activities.ProposalObjectiveID("cap-1", 0), activities.ProposalObjectiveID("cap-3", 0),
			activities.ProposalObjectiveID("cap-3", 1)
		require.Equal(t, []string{merged, first, second}, gate.ObjectiveIDs)
		require.Equal(t, "Retry failed fetches", tb.objective(t, merged).Title)
		require.Equal(t, "HIGH", tb.objective(t, merged).Urgency)
		require.Equal(t, "Add search filters", tb.objective(t, second).Title)
		for c, want := range map[string][]string{"cap-1": {merged}, "cap-2": {merged}, "cap-3": {first, second}, "cap-4": {}} {
			rec := tb.captureRec(t, c)
			require.Equal(t, domain.CaptureProcessed, rec.Status, c)
			require.Equal(t, want, rec.ObjectiveIDs, c)
		}

		// The model saw the open objective it called the duplicate.
		require.Equal(t, 1, m.asked())
		in, err := triage.DecodeInput(m.inputs[0])
		require.NoError(t, err)
		require.Equal(t, []triage.OpenObjective{{ObjectiveID: "o-login", Title: "Add a login page"}}, in.OpenObjectives)
		require.Zero(t, in.FailedRounds)

		b, err := tb.store.GetOutputBundle(t.Context(), gate.WorkOrderID)
		require.NoError(t, err)
		require.NotNil(t, b.Metadata.RunReport)
		require.Equal(t, "triager-1", b.Metadata.RunReport.Model)
		require.Contains(t, b.Notes, "capture cap-4 skipped: duplicate of objective o-login")

		// A retried gate: the stored verdict, nothing created twice.
		again, err := tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: gate.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, gate.ObjectiveIDs, again.ObjectiveIDs, "each id once, in the round's order")
		require.Equal(t, 4, tb.objectiveCount(t))
		require.Len(t, rec.spent, 1, "the round's model call is counted once")
		require.Equal(t, "triager-1", rec.spent[0].RunReport.Model)
		tb.requireAuditClean(t)
	})
}

func TestTrack_AnAnswerThatIsNotAValidAccountFailsAndCreatesNothing(t *testing.T) {
	missing := `{"proposals":[{"capture_buffer_id":"cap-1","title":"Only one","acceptance_criteria":[],"urgency":"NORMAL"}],"skipped":[]}`
	for name, answer := range map[string]string{"misses a capture": missing, "not JSON": "Sure! Here are the objectives: …"} {
		t.Run(name, func(t *testing.T) {
			forEachModelTrackBackend(t, 3, []string{answer}, func(t *testing.T, tb *testBundle, _ *modelEndpoint) {
				ev := tb.capture(t, "cap-1", "one", time.Second)
				tb.capture(t, "cap-2", "two", 2*time.Second)
				gate := tb.runTriage(t, ev.EventID)
				require.Equal(t, domain.GateFail, gate.GateResult)
				require.Empty(t, gate.ObjectiveIDs)
				require.Equal(t, 0, tb.objectiveCount(t))
				require.Equal(t, domain.PauseGateFailed, gate.Pause.Reason)
				for _, c := range []string{"cap-1", "cap-2"} {
					rec := tb.captureRec(t, c)
					require.Equal(t, domain.CapturePending, rec.Status, "%s is left unprocessed", c)
					require.Empty(t, rec.ObjectiveIDs)
					require.Empty(t, rec.WorkOrderID, "%s goes back to triage", c)
				}
				// cap-1's event was processed by this round: it gets the next
				// one; cap-2 gets its second while its first still waits.
				require.Equal(t, int64(1), tb.pendingCaptureEvent(t, "cap-1").TransitionSeq)
				evs, err := tb.store.ListUnprocessedEvents(t.Context(), store.ListEventsParams{
					EventType: domain.EventCaptureReady, SubjectID: "cap-2"})
				require.NoError(t, err)
				require.Len(t, evs, 2)
				if name == "misses a capture" {
					require.Contains(t, gate.GateReason, "capture(s) cap-2 not accounted for")
				} else {
					require.Contains(t, gate.GateReason, "triage output is not a proposal set")
				}
				tb.requireAuditClean(t)
			})
		})
	}
}

// runNextTriage does what the track does with the events the poller hands
// it: it takes the pending track events oldest first, processing each one
// whose capture a round holds already (ALREADY_TAKEN), until one schedules
// a round, which it runs and gates. It fails when no event schedules one.
func (tb *testBundle) runNextTriage(t *testing.T) activities.TrackGateResult {
	t.Helper()
	evs, err := tb.tracks.PendingTrackEvents(t.Context(), activities.PendingTrackEventsInput{})
	require.NoError(t, err)
	for _, ev := range evs {
		res := tb.scheduleTrack(t, ev.EventID)
		if res.Reason == domain.ReasonAlreadyTaken {
			continue
		}
		require.Equal(t, domain.ReasonScheduled, res.Reason)
		wo := res.WorkOrder.WorkOrderID
		_, err := tb.steps.Run(t.Context(), activities.RunInput{WorkOrderID: wo})
		require.NoError(t, err)
		gate, err := tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: wo})
		require.NoError(t, err)
		return gate
	}
	require.FailNow(t, "no pending track event scheduled a triage round")
	return activities.TrackGateResult{}
}

// requireNoTrackEventPending: nothing is left for the track to do.
func (tb *testBundle) requireNoTrackEventPending(t *testing.T) {
	t.Helper()
	evs, err := tb.tracks.PendingTrackEvents(t.Context(), activities.PendingTrackEventsInput{})
	require.NoError(t, err)
	for _, ev := range evs {
		require.Equal(t, domain.ReasonAlreadyTaken, tb.scheduleTrack(t, ev.EventID).Reason, ev.EventID)
	}
	evs, err = tb.tracks.PendingTrackEvents(t.Context(), activities.PendingTrackEventsInput{})
	require.NoError(t, err)
	require.Empty(t, evs)
}

// Two model rounds fail and hand their captures back, each with their next
// CAPTURE_READY event; the round after them, the built-in fallback, takes
// the same captures without anyone adding them again and makes them
// objectives. No capture is left behind, none twice.
func TestTrack_AFailedRoundHandsItsCapturesToTheNextUntilTheFallbackTriagesThem(t *testing.T) {
	forEachModelTrackBackend(t, 2, []string{"not an answer"}, func(t *testing.T, tb *testBundle, m *modelEndpoint) {
		tb.tracks.Tasks.TriageMaxFailures = 2
		tb.capture(t, "cap-1", "Fix the first", time.Second)
		tb.capture(t, "cap-2", "Fix the second", 2*time.Second)

		var failed []string
		for round := range 2 {
			gate := tb.runNextTriage(t)
			require.Equal(t, domain.GateFail, gate.GateResult, "round %d", round+1)
			require.Contains(t, gate.Pause.PrioritizedActions[1], "went back to triage")
			failed = append(failed, gate.WorkOrderID)
			for _, c := range []string{"cap-1", "cap-2"} {
				require.Empty(t, tb.captureRec(t, c).WorkOrderID, "round %d handed %s back", round+1, c)
			}
			tb.requireAuditClean(t)
		}
		require.Equal(t, 2, m.asked())
		for _, wo := range failed {
			snap, err := tb.store.GetContextSnapshot(t.Context(), "cs-"+wo[len("wo-"):])
			require.NoError(t, err)
			require.Equal(t, []string{"cap-1", "cap-2"}, snapshotCaptures(t, snap), "%s took both", wo)
		}

		gate := tb.runNextTriage(t)
		require.Equal(t, 2, m.asked(), "the third round does not ask the model")
		require.Equal(t, domain.GatePass, gate.GateResult, gate.GateReason)
		ids := []string{activities.ProposalObjectiveID("cap-1", 0), activities.ProposalObjectiveID("cap-2", 0)}
		require.Equal(t, ids, gate.ObjectiveIDs)
		require.Equal(t, "Fix the first", tb.objective(t, ids[0]).Title)
		for i, c := range []string{"cap-1", "cap-2"} {
			rec := tb.captureRec(t, c)
			require.Equal(t, domain.CaptureProcessed, rec.Status, c)
			require.Equal(t, gate.WorkOrderID, rec.WorkOrderID, c)
			require.Equal(t, []string{ids[i]}, rec.ObjectiveIDs, c)
		}
		b, err := tb.store.GetOutputBundle(t.Context(), gate.WorkOrderID)
		require.NoError(t, err)
		require.Contains(t, b.Notes, "fallback: the 2 triage round(s) before this one failed their gate in a row (tasks.triage.max_failures 2)")

		// The events the failed rounds emitted find their captures taken.
		tb.requireNoTrackEventPending(t)
		require.Equal(t, 2, tb.objectiveCount(t))
		tb.requireAuditClean(t)

		// The fallback passed: the next round asks the model again.
		tb.capture(t, "cap-4", "Fix the fourth", 4*time.Second)
		require.Equal(t, domain.GateFail, tb.runNextTriage(t).GateResult)
		require.Equal(t, 3, m.asked())
		tb.requireAuditClean(t)
	})
}

// The built-in fallback is the last round that runs without a human: when
// it fails too, its captures stay taken, no event is emitted for them, and
// its pause says to add them again. So a capture cannot go round for ever.
func TestTrack_AFailedFallbackRoundKeepsItsCapturesForAHuman(t *testing.T) {
	forEachModelTrackBackend(t, 1, []string{"not an answer"}, func(t *testing.T, tb *testBundle, m *modelEndpoint) {
		tb.tracks.Tasks.TriageMaxFailures = 1
		ev := tb.capture(t, "cap-1", "Fix it", time.Second)
		require.Equal(t, domain.GateFail, tb.runTriage(t, ev.EventID).GateResult)
		next := tb.pendingCaptureEvent(t, "cap-1")

		res := tb.scheduleTrack(t, next.EventID)
		require.Equal(t, domain.ReasonScheduled, res.Reason)
		wo := res.WorkOrder.WorkOrderID
		gate, err := tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: wo,
			RunFailure: "worker lost"})
		require.NoError(t, err)
		require.Equal(t, domain.GateFail, gate.GateResult)
		require.Equal(t, 1, m.asked())
		rec := tb.captureRec(t, "cap-1")
		require.Equal(t, domain.CapturePending, rec.Status)
		require.Equal(t, wo, rec.WorkOrderID, "the capture stays taken")
		require.Contains(t, gate.Pause.PrioritizedActions[1], "add the captures again")
		tb.requireNoTrackEventPending(t)

		// A retried gate changes nothing.
		again, err := tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: wo,
			RunFailure: "worker lost"})
		require.NoError(t, err)
		require.Equal(t, gate.GateResult, again.GateResult)
		require.Equal(t, wo, tb.captureRec(t, "cap-1").WorkOrderID)
		tb.requireAuditClean(t)
	})
}

func TestTrack_CommandRouteMergesTwoCapturesIntoOneObjective(t *testing.T) {
	forEachTrackBackend(t, nil, func(t *testing.T, tb *testBundle) {
		// The stand-in answers from the input file it was given.
		run := `set -e
grep -q '"capture_buffer_id":"cap-2"' "$AZOLLA_INPUT_FILE"
echo '{"proposals":[{"capture_buffer_id":"cap-1","merged_capture_buffer_ids":["cap-2"],"title":"Retry failed fetches","acceptance_criteria":[],"urgency":"NORMAL"}],"skipped":[]}'`
		tb.steps.Diazotrophs = diazotroph.NewRegistry(tb.fake, manifest.Diazotroph{}, triage.New(triage.Options{
			Model: triage.NewCommand(run, sandboxtest.Unconfined(t, sandbox.Policy{}))}))
		ev := tb.capture(t, "cap-1", "fetches fail", time.Second)
		tb.capture(t, "cap-2", "retry fetches", 2*time.Second)
		gate := tb.runTriage(t, ev.EventID)
		require.Equal(t, domain.GatePass, gate.GateResult, gate.GateReason)
		id := activities.ProposalObjectiveID("cap-1", 0)
		require.Equal(t, []string{id}, gate.ObjectiveIDs)
		require.Equal(t, 1, tb.objectiveCount(t))
		for _, c := range []string{"cap-1", "cap-2"} {
			require.Equal(t, []string{id}, tb.captureRec(t, c).ObjectiveIDs, c)
		}
		tb.requireAuditClean(t)
	})
}
