-- handed_over_at: when the objective was handed to Temporal. It is set once
-- its lifecycle was started (SignalWithStart succeeded) or found to exist,
-- or once the poller found it needs none (DONE, rejected). The poller then
-- leaves the objective to its events; only objectives without it (written
-- straight into the database, or stored before this migration) cost it a
-- look at Temporal, once each. The partial index keeps that look-up free of
-- the objectives already handed over, so an idle pass costs the same
-- whatever number of objectives wait.
ALTER TABLE objectives ADD COLUMN handed_over_at TIMESTAMPTZ;
CREATE INDEX objectives_to_hand_over ON objectives (created_at, objective_id) WHERE handed_over_at IS NULL;
-- The poller pages through unprocessed events by (created_at, event_id).
CREATE INDEX events_pending ON events (created_at, event_id) WHERE processed = FALSE;
