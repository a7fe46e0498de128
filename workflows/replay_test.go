package workflows

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// generations lists testdata's generations of recorded histories, oldest
// first (g001, g002, ...).
func generations(t *testing.T) []string {
	t.Helper()
	gens, err := filepath.Glob(filepath.Join("testdata", "g[0-9][0-9][0-9]"))
	require.NoError(t, err)
	slices.Sort(gens)
	require.NotEmpty(t, gens, "no recorded histories: run make record-histories")
	return gens
}

// Histories recorded from real runs on the embedded server (make
// record-histories) must replay on the current code, every generation of
// them: a change that breaks determinism for a lifecycle still running
// somewhere fails here.
func TestReplay_RecordedHistories(t *testing.T) {
	for _, gen := range generations(t) {
		files, err := filepath.Glob(filepath.Join(gen, "*.json"))
		require.NoError(t, err)
		require.NotEmpty(t, files, "generation %s holds no history", gen)
		for _, f := range files {
			t.Run(filepath.Base(gen)+"/"+filepath.Base(f), func(t *testing.T) {
				r := worker.NewWorkflowReplayer()
				r.RegisterWorkflowWithOptions(ObjectiveWorkflow, workflow.RegisterOptions{Name: ObjectiveWorkflowName})
				r.RegisterWorkflowWithOptions(TrackWorkflow, workflow.RegisterOptions{Name: TrackWorkflowName})
				r.RegisterWorkflowWithOptions(DeadlineMonitorWorkflow, workflow.RegisterOptions{Name: DeadlineMonitorWorkflowName})
				require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
			})
		}
	}
}

// firstTaskGeneration is the first generation that recorded TrackWorkflow
// and DeadlineMonitorWorkflow; it and every later one hold their scenarios.
const firstTaskGeneration = "g005"

// firstForgeGeneration is the first generation that recorded a pull
// request's review loop (change pull-request).
const firstForgeGeneration = "g007"

// firstBestOfNGeneration is the first generation that recorded a
// workorder run as several candidates (change best-of-n).
const firstBestOfNGeneration = "g008"

// firstIssueGeneration is the first generation that recorded an
// objective made from a forge issue and approved by a comment (change
// forge intake: no workflow command changed, the history is kept to prove
// it).
const firstIssueGeneration = "g010"

// firstPartialGeneration is the first generation that recorded a round
// resuming the partial work of the round before (change partial work: no
// workflow command changed, the history is kept to prove it).
const firstPartialGeneration = "g011"

// firstQuestionGeneration is the first generation that recorded an
// agent's question and the round its answer started (no workflow command
// changed: the answer is a retry that says it answers).
const firstQuestionGeneration = "g012"

// lastQueuedGateGeneration is the last generation whose gates without
// gate commands were activities on the lifecycle's queue (version
// runSlotsLightGate of changeRunSlots); later ones run them as local
// activities.
const lastQueuedGateGeneration = "g016"

// firstSlotQueueGeneration is the first generation that recorded a run
// turned away under a repository's limit, queued for a slot (AwaitRunSlot)
// and run again with it (version runSlotsQueue of changeRunSlots).
const firstSlotQueueGeneration = "g015"

// Every generation keeps the scenarios that cover the lifecycle's paths,
// and histories live only inside generations (nothing to overwrite).
func TestReplay_GenerationsCoverEveryScenario(t *testing.T) {
	loose, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.Empty(t, loose, "recorded histories belong in a generation folder, testdata/gNNN/")
	for _, gen := range generations(t) {
		want := []string{"pass_run1.json", "gate_fail_retry_run1.json", "gate_fail_retry_run2.json",
			"blocked_unblock_run1.json", "blocked_unblock_run2.json", "reject_run1.json"}
		if filepath.Base(gen) >= firstTaskGeneration {
			want = append(want, "track_run1.json", "deadline_run1.json")
		}
		if filepath.Base(gen) >= firstForgeGeneration {
			want = append(want, "forge_review_run1.json", "forge_review_run2.json")
		}
		if filepath.Base(gen) >= firstBestOfNGeneration {
			want = append(want, "best_of_n_run1.json")
		}
		if filepath.Base(gen) >= firstIssueGeneration {
			want = append(want, "forge_issue_run1.json")
		}
		if filepath.Base(gen) >= firstPartialGeneration {
			want = append(want, "partial_resume_run1.json", "partial_resume_run2.json")
		}
		if filepath.Base(gen) >= firstQuestionGeneration {
			want = append(want, "question_answered_run1.json", "question_answered_run2.json")
		}
		if filepath.Base(gen) >= firstSlotQueueGeneration {
			want = append(want, "slot_queued_run1.json")
		}
		for _, w := range want {
			require.FileExists(t, filepath.Join(gen, w), "generation %s lacks a scenario", gen)
		}
	}
}

// The newest generation was recorded by the current code: its histories
// carry the version marker of every change in versions.go, so the paths
// behind each GetVersion are replayed, not only the old ones.
func TestReplay_NewestGenerationRecordsEveryChange(t *testing.T) {
	gens := generations(t)
	newest := gens[len(gens)-1]
	recorded := versionMarkers(t, filepath.Join(newest, "pass_run1.json"))
	// Each change id at its newest version.
	want := map[string]int{changeWakeReloads: 1, changeFinishHandlers: 1, changeProvenanceAttrs: 1, changeLocalStoreSteps: 2,
		changeOneUpsertPerRun: 1, changeOverdueAttribute: 2}
	for change, v := range want {
		require.Equal(t, v, recorded[change], "%s was recorded before version %d of change %q: run make record-histories", newest, v, change)
	}
	// Asked before a round's first heavy step: the pass has one.
	require.Equal(t, int(runSlotsLocalGate), recorded[changeRunSlots], "%s was recorded before version %d of change %q",
		newest, runSlotsLocalGate, changeRunSlots)
	// A run turned away for a slot queued on the lifecycle's own queue,
	// then ran with the slot granted.
	queue, _ := scheduled(t, filepath.Join(newest, "slot_queued_run1.json"), "AwaitRunSlot")
	require.False(t, strings.HasSuffix(queue, "-runs"), "AwaitRunSlot went on %s", queue)
	// ... and its Run went on the run task queue, ordered by the
	// objective's urgency (NORMAL: 3), and its gate, which runs no gate
	// command, ran as a local activity (version 5; on version 4 it was an
	// activity on the lifecycle's queue, as lastQueuedGateGeneration
	// recorded).
	queue, priority := scheduled(t, filepath.Join(newest, "pass_run1.json"), "Run")
	require.True(t, strings.HasSuffix(queue, "-runs"), "Run went on %s", queue)
	require.Equal(t, int32(3), priority, "Run's priority")
	require.Contains(t, localActivities(t, filepath.Join(newest, "pass_run1.json")), "Gate")
	require.False(t, schedules(t, filepath.Join(newest, "pass_run1.json"), "Gate"), "a gate without gate commands was an activity")
	queue, _ = scheduled(t, filepath.Join("testdata", lastQueuedGateGeneration, "pass_run1.json"), "Gate")
	require.False(t, strings.HasSuffix(queue, "-runs"), "a gate without gate commands went on %s", queue)
	// Asked only where a pull request is opened or followed.
	forge := versionMarkers(t, filepath.Join(newest, "forge_review_run1.json"))
	require.Equal(t, 1, forge[changePullRequest], "%s was recorded before change %q", newest, changePullRequest)
	// Asked only where a PATCH_DIAZOTROPH workorder runs: the forge's are.
	require.Equal(t, 1, forge[changeSetupAllowance], "%s was recorded before change %q", newest, changeSetupAllowance)
	// Asked only where a workorder runs as several candidates.
	best := versionMarkers(t, filepath.Join(newest, "best_of_n_run1.json"))
	require.Equal(t, bestOfNParallel, int(best[changeBestOfN]), "%s was recorded before version %d of change %q", newest,
		bestOfNParallel, changeBestOfN)
}

// versionMarkers reads a recorded history's version markers: change id to
// version.
// scheduled is the task queue and the priority key of the first activity
// called name that file's history scheduled.
// readHistory reads a recorded history.
func readHistory(t *testing.T, file string) *historypb.History {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	return h
}

// schedules says whether file's history scheduled an activity called name.
func schedules(t *testing.T, file, name string) bool {
	t.Helper()
	for _, ev := range readHistory(t, file).GetEvents() {
		if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == name {
			return true
		}
	}
	return false
}

// localActivities names the local activities file's history recorded, in
// order.
func localActivities(t *testing.T, file string) []string {
	t.Helper()
	var names []string
	for _, ev := range readHistory(t, file).GetEvents() {
		m := ev.GetMarkerRecordedEventAttributes()
		if m.GetMarkerName() != "LocalActivity" {
			continue
		}
		var data struct{ ActivityType string }
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(m.GetDetails()["data"], &data))
		names = append(names, data.ActivityType)
	}
	return names
}

func scheduled(t *testing.T, file, name string) (string, int32) {
	t.Helper()
	h := readHistory(t, file)
	for _, ev := range h.GetEvents() {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a.GetActivityType().GetName() == name {
			return a.GetTaskQueue().GetName(), a.GetPriority().GetPriorityKey()
		}
	}
	t.Fatalf("%s schedules no %s", file, name)
	return "", 0
}

func versionMarkers(t *testing.T, file string) map[string]int {
	t.Helper()
	h := readHistory(t, file)
	recorded := map[string]int{}
	for _, ev := range h.GetEvents() {
		m := ev.GetMarkerRecordedEventAttributes()
		if m.GetMarkerName() != "Version" {
			continue
		}
		var change string
		var version int
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(m.GetDetails()["change-id"], &change))
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(m.GetDetails()["version"], &version))
		recorded[change] = version
	}
	return recorded
}
