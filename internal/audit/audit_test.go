package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

// everyOutcome leaves one objective at each place the lifecycle can rest,
// all of them consistent.
func everyOutcome(t *testing.T, s store.Querier) {
	t.Helper()
	ctx := context.Background()
	openPullRequest(t, s, passed(t, s, "obj-pass"), 1) // and its pull request is open
	judgeOn(t, s, "obj-pass", "ev-obj-pass")           // with feedback judged on it

	failed := schedule(t, s, "obj-fail")
	execute(t, s, failed)
	gate(t, s, failed, domain.GateFail)

	// The Run failed for good: a FAIL verdict on a workorder never executed.
	broken := schedule(t, s, "obj-run-failed")
	release(t, s, hold(t, s, domain.ResourceWorkOrder, broken.WorkOrderID, T0.Add(2*time.Minute)), T0.Add(2*time.Minute))
	gate(t, s, broken, domain.GateFail)

	// A PASS whose issue was closed while it ran is handed back as
	// CLOSED_ON_FORGE, not RUN_COMPLETE.
	closed := schedule(t, s, "obj-closed")
	execute(t, s, closed)
	_, err := s.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: closed.WorkOrderID, ObjectiveID: "obj-closed",
		GateResult: domain.GatePass, GateReason: "checked", CreatedAt: T0, UpdatedAt: T0})
	require.NoError(t, err)
	pause(t, s, "obj-closed", closed.WorkOrderID, domain.PauseClosedOnForge)
	move(t, s, "obj-closed", domain.StatusInProgress, domain.StatusDone, T0)

	// A runner is at work: its claim is live, nothing is gated yet.
	running := schedule(t, s, "obj-running")
	hold(t, s, domain.ResourceWorkOrder, running.WorkOrderID, now.Add(-10*time.Second))

	// Blocked at scheduling (step 4).
	require.NoError(t, s.CreateObjective(ctx, storetest.Objective("obj-blocked")))
	move(t, s, "obj-blocked", domain.StatusNew, domain.StatusTodo, T0)
	ev := emit(t, s, "ev-obj-blocked", "obj-blocked", 1)
	c := hold(t, s, domain.ResourceEvent, ev.EventID, T0.Add(time.Minute))
	pause(t, s, "obj-blocked", "", domain.PauseBlocked)
	move(t, s, "obj-blocked", domain.StatusTodo, domain.StatusBlocked, T0.Add(time.Minute))
	markProcessed(t, s, ev.EventID, domain.ReasonBlocked)
	release(t, s, c, T0.Add(time.Minute))

	// Step 3: no objective, and one not executable.
	emit(t, s, "ev-ghost", "obj-ghost", 1)
	markProcessed(t, s, "ev-ghost", domain.ReasonMissingTicket)
	require.NoError(t, s.CreateObjective(ctx, storetest.Objective("obj-new")))
	emit(t, s, "ev-obj-new", "obj-new", 0)
	markProcessed(t, s, "ev-obj-new", domain.ReasonNonExecutableStatus)

	// Waiting for the scheduler: an unprocessed event, an expired claim.
	require.NoError(t, s.CreateObjective(ctx, storetest.Objective("obj-waiting")))
	move(t, s, "obj-waiting", domain.StatusNew, domain.StatusTodo, T0)
	emit(t, s, "ev-obj-waiting", "obj-waiting", 1)
	hold(t, s, domain.ResourceEvent, "ev-obj-waiting", T0)
}

func TestRun_ConsistentLifecycleReportsNothingAndChecksEveryRule(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		everyOutcome(t, s)
		jobsEveryState(t, s)
		tasksEveryState(t, s)
		candidatesEveryState(t, s)
		intakeEveryState(t, s)
		rep := audited(t, s, withStoreMessages(s))
		require.Empty(t, rep.Violations)
		require.Empty(t, rep.Skipped)
		require.Len(t, rep.Checked, len(audit.Rules()))
		for _, rule := range audit.Rules() {
			require.Positive(t, rep.Checked[rule], "rule %s checked nothing", rule)
		}
		require.Equal(t, 5+2+3, rep.Checked[audit.RuleWorkOrderPerEvent], "one item per workorder (two of them the track's, three best-of-N)")
		require.Equal(t, 9+4+3+1, rep.Checked[audit.RuleEventProcessedOnce], "one item per event (four of them the track's, three best-of-N, one a posted document's capture)")
	})
}

func TestRun_EmptyStoreIsClean(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		rep := audited(t, s)
		require.Equal(t, []audit.Violation{}, rep.Violations)
		require.Zero(t, rep.Items())
	})
}

// Each case starts from objective obj-1 run to a PASS (workorder wo-obj-1,
// event ev-obj-1) and breaks one guarantee, through the store where the
// store allows it and with raw SQL where it would refuse.
func TestRun_ReportsEachBrokenGuarantee(t *testing.T) {
	t.Parallel()
	type want struct{ rule, resource string }
	tests := []struct {
		name    string
		corrupt func(t *testing.T, s *sqlstore.Store)
		want    []want
	}{
		// workorder-per-event
		{"two workorders for one event", func(t *testing.T, s *sqlstore.Store) {
			dropUnique(t, s, "workorders")
			raw(t, s, `INSERT INTO workorders (work_order_id, event_id, objective_id, diazotroph_type, context_snapshot_id,
				branch_name, budget_ms, status, created_at) VALUES ('wo-dup', 'ev-obj-1', 'obj-1', 'PATCH_DIAZOTROPH',
				'cs-obj-1', 'azolla/obj-1', 60000, 'CREATED', $1)`, s.EncodeTime(T0))
		}, []want{{audit.RuleWorkOrderPerEvent, "event ev-obj-1"}}},
		{"workorder whose event does not exist", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `INSERT INTO workorders (work_order_id, event_id, objective_id, diazotroph_type, context_snapshot_id,
				branch_name, budget_ms, status, created_at) VALUES ('wo-ghost', 'ev-ghost', 'obj-1', 'PATCH_DIAZOTROPH',
				'cs-obj-1', 'azolla/obj-1', 60000, 'CREATED', $1)`, s.EncodeTime(T0))
		}, []want{{audit.RuleWorkOrderPerEvent, "workorder wo-ghost"}}},
		{"workorder on an unprocessed event", func(t *testing.T, s *sqlstore.Store) {
			workOrderOn(t, s, emit(t, s, "ev-2", "obj-1", 7))
		}, []want{{audit.RuleWorkOrderPerEvent, "workorder wo-ev-2"}}},
		{"workorder on an event processed MISSING_TICKET", func(t *testing.T, s *sqlstore.Store) {
			ev := emit(t, s, "ev-2", "obj-1", 7)
			markProcessed(t, s, ev.EventID, domain.ReasonMissingTicket)
			workOrderOn(t, s, ev)
		}, []want{{audit.RuleWorkOrderPerEvent, "workorder wo-ev-2"}, {audit.RuleEventProcessedOnce, "event ev-2"}}},

		// bundle-per-executed-workorder
		{"executed workorder without a bundle", func(t *testing.T, s *sqlstore.Store) {
			wo := schedule(t, s, "obj-2")
			_, _, err := s.MarkWorkOrderExecuted(context.Background(), store.MarkWorkOrderExecutedParams{WorkOrderID: wo.WorkOrderID, Now: T0})
			require.NoError(t, err)
		}, []want{{audit.RuleBundlePerExecuted, "workorder wo-obj-2"}}},
		{"created workorder with a bundle", func(t *testing.T, s *sqlstore.Store) {
			wo := schedule(t, s, "obj-2")
			_, _, err := s.CreateOutputBundle(context.Background(), &domain.OutputBundle{WorkOrderID: wo.WorkOrderID,
				Title: "Fix", RunnerStatus: domain.RunnerBudgetExhausted, CreatedAt: T0})
			require.NoError(t, err)
		}, []want{{audit.RuleBundlePerExecuted, "workorder wo-obj-2"}}},
		{"two bundles for one workorder", func(t *testing.T, s *sqlstore.Store) {
			dropUnique(t, s, "output_bundles")
			insertBundle(t, s, "wo-obj-1")
		}, []want{{audit.RuleBundlePerExecuted, "workorder wo-obj-1"}}},
		{"bundle whose workorder does not exist", func(t *testing.T, s *sqlstore.Store) {
			insertBundle(t, s, "wo-ghost")
		}, []want{{audit.RuleBundlePerExecuted, "output_bundle wo-ghost"}}},
		{"workorder with an unknown status", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE workorders SET status = 'RUNNING' WHERE work_order_id = 'wo-obj-1'`)
		}, []want{{audit.RuleBundlePerExecuted, "workorder wo-obj-1"}, {audit.RuleRunRecordPerGated, "workorder wo-obj-1"}}},

		// run-record-per-gated-workorder
		{"PASS on a workorder never executed", func(t *testing.T, s *sqlstore.Store) {
			wo := schedule(t, s, "obj-2")
			gate(t, s, wo, domain.GatePass)
		}, []want{{audit.RuleRunRecordPerGated, "workorder wo-obj-2"}}},
		{"gate pause state without a run record", func(t *testing.T, s *sqlstore.Store) {
			wo := schedule(t, s, "obj-2")
			execute(t, s, wo)
			pause(t, s, "obj-2", wo.WorkOrderID, domain.PauseGateFailed)
		}, []want{{audit.RuleRunRecordPerGated, "workorder wo-obj-2"}}},
		{"gate pause state naming a missing workorder", func(t *testing.T, s *sqlstore.Store) {
			pause(t, s, "obj-1", "wo-ghost", domain.PauseRunComplete)
		}, []want{{audit.RuleRunRecordPerGated, "workorder wo-ghost"}}},
		{"two run records for one workorder", func(t *testing.T, s *sqlstore.Store) {
			dropUnique(t, s, "run_records")
			insertRunRecord(t, s, "wo-obj-1")
		}, []want{{audit.RuleRunRecordPerGated, "workorder wo-obj-1"}}},
		{"run record whose workorder does not exist", func(t *testing.T, s *sqlstore.Store) {
			insertRunRecord(t, s, "wo-ghost")
		}, []want{{audit.RuleRunRecordPerGated, "workorder wo-ghost"}}},
		{"run record naming another objective", func(t *testing.T, s *sqlstore.Store) {
			_, err := s.UpsertRunRecord(context.Background(), &domain.RunRecord{WorkOrderID: "wo-obj-1", ObjectiveID: "obj-other",
				GateResult: domain.GatePass, GateReason: "checked", CreatedAt: T0, UpdatedAt: T0})
			require.NoError(t, err)
		}, []want{{audit.RuleRunRecordPerGated, "workorder wo-obj-1"}}},

		// event-processed-once
		{"processed event without a reason", func(t *testing.T, s *sqlstore.Store) {
			emit(t, s, "ev-2", "obj-1", 7)
			raw(t, s, `UPDATE events SET processed = TRUE, processed_at = $1 WHERE event_id = 'ev-2'`, s.EncodeTime(T0))
		}, []want{{audit.RuleEventProcessedOnce, "event ev-2"}}},
		{"processed event with an unknown reason", func(t *testing.T, s *sqlstore.Store) {
			emit(t, s, "ev-2", "obj-1", 7)
			raw(t, s, `UPDATE events SET processed = TRUE, processed_reason = 'LOST', processed_at = $1 WHERE event_id = 'ev-2'`, s.EncodeTime(T0))
		}, []want{{audit.RuleEventProcessedOnce, "event ev-2"}}},
		{"processed event without processed_at", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE events SET processed_at = NULL WHERE event_id = 'ev-obj-1'`)
		}, []want{{audit.RuleEventProcessedOnce, "event ev-obj-1"}}},
		{"unprocessed event with a reason", func(t *testing.T, s *sqlstore.Store) {
			emit(t, s, "ev-2", "obj-1", 7)
			raw(t, s, `UPDATE events SET processed_reason = 'SCHEDULED' WHERE event_id = 'ev-2'`)
		}, []want{{audit.RuleEventProcessedOnce, "event ev-2"}}},
		{"unprocessed event with processed_at", func(t *testing.T, s *sqlstore.Store) {
			emit(t, s, "ev-2", "obj-1", 7)
			raw(t, s, `UPDATE events SET processed_at = $1 WHERE event_id = 'ev-2'`, s.EncodeTime(T0))
		}, []want{{audit.RuleEventProcessedOnce, "event ev-2"}}},
		{"SCHEDULED event without a workorder", func(t *testing.T, s *sqlstore.Store) {
			emit(t, s, "ev-2", "obj-1", 7)
			markProcessed(t, s, "ev-2", domain.ReasonScheduled)
		}, []want{{audit.RuleEventProcessedOnce, "event ev-2"}}},

		// claim-schema
		{"claim owner with whitespace", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE claims SET owner_id = 'two words' WHERE resource_type = 'EVENT' AND resource_id = 'ev-obj-1'`)
		}, []want{{audit.RuleClaimSchema, "claim EVENT ev-obj-1"}}},
		{"claim on an unknown resource type", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `INSERT INTO claims (resource_type, resource_id, owner_id, lease_expires_at, heartbeat_at, claim_version)
				VALUES ('TICKET', 'x-1', 'w1', $1, $1, 1)`, s.EncodeTime(T0))
		}, []want{{audit.RuleClaimSchema, "claim TICKET x-1"}}},

		// no-live-claim-on-finished
		{"live claim on a processed event", func(t *testing.T, s *sqlstore.Store) {
			hold(t, s, domain.ResourceEvent, "ev-obj-1", now.Add(-10*time.Second))
		}, []want{{audit.RuleNoLiveClaimOnFinished, "claim EVENT ev-obj-1"}}},
		{"live claim on a gated workorder", func(t *testing.T, s *sqlstore.Store) {
			hold(t, s, domain.ResourceWorkOrder, "wo-obj-1", now.Add(-10*time.Second))
		}, []want{{audit.RuleNoLiveClaimOnFinished, "claim WORKORDER wo-obj-1"}}},

		// objective-status
		{"objective status outside the schema", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE objectives SET status = 'FINISHED' WHERE objective_id = 'obj-1'`)
		}, []want{{audit.RuleObjectiveStatus, "objective obj-1"}}},
		{"DONE without any run record", func(t *testing.T, s *sqlstore.Store) {
			require.NoError(t, s.CreateObjective(context.Background(), storetest.Objective("obj-2")))
			move(t, s, "obj-2", domain.StatusNew, domain.StatusDone, T0)
		}, []want{{audit.RuleObjectiveStatus, "objective obj-2"}}},
		{"DONE whose verdict is FAIL", func(t *testing.T, s *sqlstore.Store) {
			_, err := s.UpsertRunRecord(context.Background(), &domain.RunRecord{WorkOrderID: "wo-obj-1", ObjectiveID: "obj-1",
				GateResult: domain.GateFail, GateReason: "regate", CreatedAt: now, UpdatedAt: now})
			require.NoError(t, err)
		}, []want{{audit.RuleObjectiveStatus, "objective obj-1"}, {audit.RuleTerminalPauseState, "workorder wo-obj-1"}}},

		// terminal-pause-state
		{"PASS without a RUN_COMPLETE pause state", func(t *testing.T, s *sqlstore.Store) {
			wo := schedule(t, s, "obj-2")
			execute(t, s, wo)
			_, err := s.UpsertRunRecord(context.Background(), &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: "obj-2",
				GateResult: domain.GatePass, GateReason: "checked", CreatedAt: T0, UpdatedAt: T0})
			require.NoError(t, err)
			move(t, s, "obj-2", domain.StatusInProgress, domain.StatusDone, T0)
		}, []want{{audit.RuleTerminalPauseState, "workorder wo-obj-2"}}},
		{"FAIL handed back as RUN_COMPLETE", func(t *testing.T, s *sqlstore.Store) {
			wo := schedule(t, s, "obj-2")
			execute(t, s, wo)
			_, err := s.UpsertRunRecord(context.Background(), &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: "obj-2",
				GateResult: domain.GateFail, GateReason: "checked", CreatedAt: T0, UpdatedAt: T0})
			require.NoError(t, err)
			pause(t, s, "obj-2", wo.WorkOrderID, domain.PauseRunComplete)
		}, []want{{audit.RuleTerminalPauseState, "workorder wo-obj-2"}}},
		{"environment FAIL handed back as CLOSED_ON_FORGE only", func(t *testing.T, s *sqlstore.Store) {
			wo := schedule(t, s, "obj-2")
			execute(t, s, wo)
			_, err := s.UpsertRunRecord(context.Background(), &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: "obj-2",
				GateResult: domain.GateFail, GateReason: "environment: setup failed", Blame: domain.BlameEnvironment,
				CreatedAt: T0, UpdatedAt: T0})
			require.NoError(t, err)
			pause(t, s, "obj-2", wo.WorkOrderID, domain.PauseClosedOnForge)
		}, []want{{audit.RuleTerminalPauseState, "workorder wo-obj-2"}}},
		{"BLOCKED event without a BLOCKED pause state", func(t *testing.T, s *sqlstore.Store) {
			require.NoError(t, s.CreateObjective(context.Background(), storetest.Objective("obj-2")))
			emit(t, s, "ev-2", "obj-2", 0)
			markProcessed(t, s, "ev-2", domain.ReasonBlocked)
		}, []want{{audit.RuleTerminalPauseState, "objective obj-2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
				passed(t, s, "obj-1")
				require.Empty(t, audited(t, s).Violations, "the starting point is consistent")
				tt.corrupt(t, s)
				rep := audited(t, s)
				for _, w := range tt.want {
					requireReported(t, rep, w.rule, w.resource)
				}
			})
		})
	}
}

func TestRun_GraceSparesClaimsWithARecentHeartbeat(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		passed(t, s, "obj-1")
		hold(t, s, domain.ResourceEvent, "ev-obj-1", now.Add(-10*time.Second))
		require.Empty(t, audited(t, s, audit.WithGrace(30*time.Second)).Violations, "heartbeat 10s ago, grace 30s")
		requireReported(t, audited(t, s, audit.WithGrace(5*time.Second)), audit.RuleNoLiveClaimOnFinished, "claim EVENT ev-obj-1")
		requireReported(t, audited(t, s), audit.RuleNoLiveClaimOnFinished, "claim EVENT ev-obj-1")
	})
}

func TestRun_ViolationsAreOrderedByRuleThenResource(t *testing.T) {
	t.Parallel()
	s := storetest.NewSQLite(t)
	passed(t, s, "obj-1")
	raw(t, s, `UPDATE objectives SET status = 'FINISHED' WHERE objective_id = 'obj-1'`)
	for _, id := range []string{"ev-b", "ev-a"} {
		emit(t, s, id, "obj-1", map[string]int64{"ev-a": 7, "ev-b": 8}[id])
		markProcessed(t, s, id, domain.ReasonScheduled)
	}
	rep := audited(t, s)
	var got [][2]string
	for _, v := range rep.Violations {
		got = append(got, [2]string{v.Rule, v.Resource})
	}
	require.Equal(t, [][2]string{
		{audit.RuleEventProcessedOnce, "event ev-a"},
		{audit.RuleEventProcessedOnce, "event ev-b"},
		{audit.RuleObjectiveStatus, "objective obj-1"},
	}, got)
}

// A Querier without SQL access (here: the store with DB hidden, and its jobs
// with it) still gets every other rule; only the raw row counts and the job
// rules are skipped, and the report says so.
func TestRun_WithoutSQLAccessSkipsRowCountsAndSaysSo(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		q := struct{ store.Querier }{s}
		everyOutcome(t, q)
		rep := audited(t, q)
		require.Empty(t, rep.Violations)
		require.Len(t, rep.Skipped, 2)

		wo := schedule(t, q, "obj-2")
		_, _, err := q.MarkWorkOrderExecuted(context.Background(), store.MarkWorkOrderExecutedParams{WorkOrderID: wo.WorkOrderID, Now: T0})
		require.NoError(t, err)
		requireReported(t, audited(t, q), audit.RuleBundlePerExecuted, "workorder wo-obj-2")
	})
}

// workOrderOn creates a workorder wo-<event> for ev's objective through the
// store, which does not check the event's state.
func workOrderOn(t *testing.T, s store.Querier, ev *domain.Event) {
	t.Helper()
	_, created, err := s.CreateWorkOrder(context.Background(), &domain.WorkOrder{WorkOrderID: "wo-" + ev.EventID,
		EventID: ev.EventID, ObjectiveID: ev.SubjectID, DiazotrophType: "PATCH_DIAZOTROPH", ContextSnapshotID: "cs-" + ev.SubjectID,
		BranchName: "azolla/" + ev.SubjectID, BudgetMS: 60000, Status: domain.WorkOrderCreated, CreatedAt: T0})
	require.NoError(t, err)
	require.True(t, created)
}

func insertBundle(t *testing.T, s *sqlstore.Store, workOrderID string) {
	t.Helper()
	raw(t, s, `INSERT INTO output_bundles (work_order_id, title, content, notes, metadata, runner_status, created_at)
		VALUES ($1, 'Fix', '', '', '{}', 'OK', $2)`, workOrderID, s.EncodeTime(T0))
}

func insertRunRecord(t *testing.T, s *sqlstore.Store, workOrderID string) {
	t.Helper()
	raw(t, s, `INSERT INTO run_records (work_order_id, objective_id, gate_result, gate_reason, created_at, updated_at)
		VALUES ($1, 'obj-1', 'PASS', 'again', $2, $2)`, workOrderID, s.EncodeTime(T0))
}
