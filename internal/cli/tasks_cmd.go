package cli

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workers"
	"github.com/azolla/azolla/workflows"
)

// maxScopeBytes bounds manifest request --scope (the event's scope field).
const maxScopeBytes = 200

func (a *app) manifestCmd() *cobra.Command {
	return groupCmd("manifest", "Request a manifest of the work and show it", a.manifestRequestCmd(), a.manifestShowCmd())
}

func (a *app) manifestRequestCmd() *cobra.Command {
	var scope string
	cmd := &cobra.Command{
		Use:   "request",
		Short: "Request a manifest: a report of what is done, in progress, blocked and overdue",
		Long: `Request a manifest. A MANIFEST_REQUESTED event is written and handed to the
task-management track, which runs it after any waiting triage: the substrate
queries are frozen into a snapshot, MANIFEST_DIAZOTROPH writes the report
and its gate hands it to you (azolla inbox, azolla manifest show). The
event id is printed alone on stdout.`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVar(&scope, "scope", "", "what the manifest should cover (one line, at most 200 bytes)")
	parse := func(*cobra.Command, []string) error {
		if scope != "" {
			if err := textsafe.CheckLine(scope); err != nil || len(scope) > maxScopeBytes {
				return usageError(fmt.Errorf("--scope must be one line of at most %d bytes", maxScopeBytes))
			}
		}
		return nil
	}
	a.withSession(cmd, preamble{parse: parse}, func(cmd *cobra.Command, _ []string, c *call) error {
		e, err := store.RequestManifest(cmd.Context(), c.store, scope, time.Time{})
		if err != nil {
			return classify(err)
		}
		a.handToTrack(cmd, c.session, e)
		_, err = fmt.Fprintln(cmd.OutOrStdout(), e.EventID)
		return err
	})
	return cmd
}

// handToTrack gives a track event to the track at once. Temporal being
// unreachable loses nothing: the event is stored, and the poller hands it
// over once Temporal is back; a warning says so.
func (a *app) handToTrack(cmd *cobra.Command, s *session, e *domain.Event) {
	err := a.dialTemporal(cmd, s)
	if err == nil {
		_, err = s.starter.Enqueue(cmd.Context(), s.cfg.Tasks.Track, e)
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "azolla: warning: %s; the track gets it when a worker's poller reaches Temporal\n",
			oneLine(err.Error()))
	}
}

func (a *app) manifestShowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show [WORK_ORDER_ID]",
		Short: "Show the latest manifest (or the one of a workorder)",
		Args:  cobra.MaximumNArgs(1),
	}
	a.withSession(cmd, preamble{output: true}, func(cmd *cobra.Command, args []string, c *call) error {
		ctx := cmd.Context()
		var wo *domain.WorkOrder
		var err error
		if len(args) == 1 {
			if wo, err = c.store.GetWorkOrder(ctx, args[0]); err != nil {
				return classify(err)
			}
			if wo.DiazotrophType != manifest.Type {
				return inputError(fmt.Errorf("workorder %s is a %s run, not a manifest", textsafe.Line(wo.WorkOrderID),
					textsafe.Line(wo.DiazotrophType)))
			}
		} else {
			list, err := c.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{DiazotrophType: manifest.Type,
				Status: domain.WorkOrderExecuted})
			if err != nil {
				return classify(err)
			}
			if len(list) == 0 {
				return &exitError{code: exitNotFound, err: fmt.Errorf("no manifest yet: request one with %s manifest request", a.self())}
			}
			wo = slices.MaxFunc(list, func(x, y *domain.WorkOrder) int {
				return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), strings.Compare(x.WorkOrderID, y.WorkOrderID))
			})
		}
		b, err := c.store.GetOutputBundle(ctx, wo.WorkOrderID)
		if errors.Is(err, domain.ErrNotFound) {
			return &exitError{code: exitNotFound, err: fmt.Errorf("manifest %s has not been written yet", wo.WorkOrderID)}
		}
		if err != nil {
			return classify(err)
		}
		rr, err := c.store.GetRunRecord(ctx, wo.WorkOrderID)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return classify(err)
		}
		if c.json {
			return writeJSON(cmd.OutOrStdout(), struct {
				WorkOrder *domain.WorkOrder    `json:"workorder"`
				Bundle    *domain.OutputBundle `json:"output_bundle"`
				RunRecord *domain.RunRecord    `json:"run_record,omitempty"`
			}{wo, b, rr})
		}
		out := cmd.OutOrStdout()
		fmt.Fprintf(out, "manifest %s (%s)", textsafe.Line(wo.WorkOrderID), wo.CreatedAt.Format(time.RFC3339))
		if rr != nil {
			fmt.Fprintf(out, ", gate %s", textsafe.Line(rr.GateResult))
		}
		_, err = fmt.Fprintf(out, "\n\n%s\n", strings.TrimRight(textsafe.Block(b.Content), "\n"))
		return err
	})
	return cmd
}

func (a *app) trackCmd() *cobra.Command {
	return groupCmd("track", "Show the task-management track", a.trackShowCmd())
}

// trackView is track show's answer: the workflow's state when Temporal
// answers, and what the store holds either way.
type trackView struct {
	Track string                `json:"track"`
	State *workflows.TrackState `json:"state,omitempty"`
	// StateError is why State is missing.
	StateError string `json:"state_error,omitempty"`
	notRunning bool
	Pending    []*domain.PendingEvent `json:"pending_events"`
	WorkOrder  []*domain.WorkOrder    `json:"recent_workorders"`
}

// trackRecent bounds the workorders track show lists.
const trackRecent = 10

func (a *app) trackShowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the track: waiting events, the active workorder, recent runs",
		Args:  cobra.NoArgs,
	}
	a.withSession(cmd, preamble{output: true}, func(cmd *cobra.Command, _ []string, c *call) error {
		ctx := cmd.Context()
		v := trackView{Track: c.cfg.Tasks.Track}
		for _, typ := range domain.TrackEventTypes() {
			pe, err := c.store.ListPendingEvents(ctx, store.PendingEventsParams{EventType: typ})
			if err != nil {
				return classify(err)
			}
			v.Pending = append(v.Pending, pe...)
		}
		wos, err := c.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{Track: v.Track})
		if err != nil {
			return classify(err)
		}
		slices.SortFunc(wos, func(x, y *domain.WorkOrder) int { return y.CreatedAt.Compare(x.CreatedAt) })
		v.WorkOrder = wos[:min(len(wos), trackRecent)]
		err = a.dialTemporal(cmd, c.session)
		if err == nil {
			var st workflows.TrackState
			if st, err = c.starter.TrackState(ctx, v.Track); err == nil {
				v.State = &st
			}
		}
		if err != nil {
			v.StateError, v.notRunning = oneLine(err.Error()), errors.Is(err, starter.ErrNoLifecycle)
		}
		if c.json {
			if v.Pending == nil {
				v.Pending = []*domain.PendingEvent{}
			}
			if v.WorkOrder == nil {
				v.WorkOrder = []*domain.WorkOrder{}
			}
			return writeJSON(cmd.OutOrStdout(), v)
		}
		return writeTrack(cmd, v)
	})
	return cmd
}

func writeTrack(cmd *cobra.Command, v trackView) error {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "track %s (workflow %s)\n", v.Track, workflows.TrackWorkflowID(v.Track))
	switch {
	case v.State != nil:
		active := "none"
		if ac := v.State.Active; ac != nil {
			active = fmt.Sprintf("%s %s (%s, workorder %s)", ac.EventType, textsafe.Line(ac.EventID), ac.Step,
				cmp.Or(textsafe.Line(ac.WorkOrderID), "-"))
		}
		fmt.Fprintf(out, "  active:            %s\n", active)
		fmt.Fprintf(out, "  waiting triage:    %d\n", len(v.State.WaitingTriage))
		fmt.Fprintf(out, "  waiting manifest:  %d\n", len(v.State.WaitingManifest))
		fmt.Fprintf(out, "  events finished:   %d\n", v.State.Completed)
	case v.notRunning:
		fmt.Fprintf(out, "  not running: it starts with the first capture or manifest request\n")
	default:
		fmt.Fprintf(out, "  state unknown: %s\n", v.StateError)
	}
	fmt.Fprintf(out, "  unprocessed events in the store: %d\n", len(v.Pending))
	if len(v.WorkOrder) > 0 {
		fmt.Fprintf(out, "recent workorders:\n")
	}
	for _, w := range v.WorkOrder {
		fmt.Fprintf(out, "  %-40s  %-20s  %-8s  %s\n", textsafe.Line(w.WorkOrderID), textsafe.Line(w.DiazotrophType),
			textsafe.Line(w.Status), w.CreatedAt.Format(time.RFC3339))
	}
	return nil
}

func (a *app) schedulesCmd() *cobra.Command {
	return groupCmd("schedules", "Manage azolla's Temporal Schedules", a.schedulesApplyCmd())
}

func (a *app) schedulesApplyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Create the deadline monitor's Schedule, or update it to the configuration",
		Long: `Create the deadline monitor's Temporal Schedule (id azolla-deadline-monitor):
every deadlines.interval it runs DeadlineMonitorWorkflow on
deadlines.task_queue, skipping a run while the last one runs. When the
Schedule exists it is described and updated to the configured spec. Workers
apply it at start too.`,
		Args: cobra.NoArgs,
	}
	a.withSession(cmd, preamble{temporal: true}, func(cmd *cobra.Command, _ []string, c *call) error {
		what, err := workers.ApplyDeadlineSchedule(cmd.Context(), c.client, c.cfg)
		if err != nil {
			return unavailableError(err)
		}
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "schedule %s %s: every %s on task queue %s\n",
			workflows.DeadlineScheduleID, what, c.cfg.Deadlines.Interval, c.cfg.Deadlines.TaskQueue)
		return err
	})
	return cmd
}
