package workflows

import (
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/activities"
)

// TrackWorkflowName is the registered name of TrackWorkflow.
const TrackWorkflowName = "TrackWorkflow"

// DefaultTrack is the name of the task-management track when none is
// configured.
const DefaultTrack = "default"

// TrackWorkflowID is the workflow id of a task-management track: one per
// track, fed by update-with-start.
func TrackWorkflowID(track string) string { return "track-" + track }

// TrackEnqueue is the update that hands a track event to TrackWorkflow;
// payload TrackItem, answer EnqueueResult. Enqueuing an event the track has
// (waiting, active or done) changes nothing.
const TrackEnqueue = "enqueue"

// TrackStateQuery is the query returning the track's TrackState.
const TrackStateQuery = "state"

// TrackInput starts (or continues) a track.
type TrackInput struct {
	Track string
	// Waiting carries the queued events across continue-as-new, oldest
	// first per kind.
	Waiting []activities.TrackEvent
	// Done carries the most recent finished event ids (bounded), so a late
	// duplicate enqueue stays a no-op.
	Done []string
	// Completed counts the events finished by earlier runs.
	Completed int
	// Recovered is true once the track has loaded the store's unprocessed
	// track events (first run only).
	Recovered bool
	Last      *TrackOutcome
}

// TrackItem is the payload of TrackEnqueue.
type TrackItem = activities.TrackEvent

// EnqueueResult answers TrackEnqueue.
type EnqueueResult struct {
	// Duplicate is true when the track already had the event.
	Duplicate bool
	// Waiting is how many events wait on the track after this one.
	Waiting int
}

// TrackOutcome is how one track event ended.
type TrackOutcome struct {
	EventID      string
	EventType    string
	Reason       string
	WorkOrderID  string
	GateResult   string
	GateReason   string
	ObjectiveIDs []string
	Error        string
}

// TrackActive is the event the track is working on.
type TrackActive struct {
	EventID     string
	EventType   string
	WorkOrderID string
	// Step is scheduling, running or gating.
	Step string
}

// TrackState is what the state query returns.
type TrackState struct {
	Track           string
	WaitingTriage   []string
	WaitingManifest []string
	Active          *TrackActive
	Completed       int
	Last            *TrackOutcome
}

// DeadlineMonitorWorkflowName is the registered name of
// DeadlineMonitorWorkflow.
const DeadlineMonitorWorkflowName = "DeadlineMonitorWorkflow"

// WorkListQuery is the Web UI's list query that shows the objectives' and
// the tracks' workflows without the deadline monitor's passes, one per
// deadlines.interval.
const WorkListQuery = `WorkflowType != "` + DeadlineMonitorWorkflowName + `"`

// DeadlineScheduleID is the fixed id of the Temporal Schedule that runs the
// deadline monitor.
const DeadlineScheduleID = "azolla-deadline-monitor"

// DeadlineMonitorResult is a monitor run's result.
type DeadlineMonitorResult struct {
	AsOf    string
	Scanned int
	// Overdue lists every objective past its deadline; NewlyOverdue those
	// whose OVERDUE pause this run wrote.
	Overdue      []string
	NewlyOverdue []string
}

// Overdue is the signal the deadline monitor sends an objective's lifecycle
// when its OVERDUE pause is written: the lifecycle upserts AzollaOverdue.
const Overdue = "overdue"

var (
	// AttrOverdue is true on the lifecycle of an objective past its
	// deadline.
	AttrOverdue = temporal.NewSearchAttributeKeyBool("AzollaOverdue")
	// AttrTrack names the task-management track of a TrackWorkflow.
	AttrTrack = temporal.NewSearchAttributeKeyKeyword("AzollaTrack")
)
