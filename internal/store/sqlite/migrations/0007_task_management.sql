-- Task management: tracks (triage, manifest), captures taken and processed,
-- pause states about a run instead of an objective, and the deadline
-- monitor's one OVERDUE pause per (objective, deadline).
--
-- "No objective" (a track's snapshot, workorder and run record, a triage or
-- manifest pause) is stored as '' in objective_id, and a track workorder's
-- missing branch as '' in branch_name, on both backends: SQLite cannot drop
-- their NOT NULL without rebuilding four tables, and one representation
-- keeps the SQL of both backends the same. '' reads back as the omitted
-- field, so every record round-trips as written. The new columns are NULL
-- where absent; a NULL subject_type means OBJECTIVE, as on every pause
-- state written before this migration.
--
-- events.handed_over_at, like objectives.handed_over_at, is not part of the
-- record: it says a track event was handed to its TrackWorkflow.
-- capture_buffers.objective_ids is a JSON array, NULL until processed.
ALTER TABLE events ADD COLUMN scope TEXT;
ALTER TABLE events ADD COLUMN handed_over_at TEXT;
ALTER TABLE context_snapshots ADD COLUMN track TEXT;
ALTER TABLE workorders ADD COLUMN track TEXT;
ALTER TABLE run_records ADD COLUMN track TEXT;
ALTER TABLE pause_states ADD COLUMN subject_type TEXT;
ALTER TABLE pause_states ADD COLUMN subject_id TEXT;
ALTER TABLE pause_states ADD COLUMN deadline_at TEXT;
ALTER TABLE capture_buffers ADD COLUMN work_order_id TEXT;
ALTER TABLE capture_buffers ADD COLUMN objective_ids TEXT;

-- Triage's read: PENDING captures no workorder took, oldest first; the
-- predicate is written as ListUntakenCaptures writes it so SQLite uses it.
CREATE INDEX capture_buffers_untaken ON capture_buffers (created_at, capture_buffer_id)
    WHERE status = 'PENDING' AND work_order_id IS NULL;
-- Pause states page in (created_at, pause_state_id) order.
CREATE INDEX pause_states_page ON pause_states (created_at, pause_state_id);
-- A track's workorders.
CREATE INDEX workorders_track ON workorders (track, created_at) WHERE track IS NOT NULL;
-- Pending track events need no index of their own: the poller pages them
-- with the other unprocessed events (events_unprocessed) and reads
-- handed_over_at from the row.
