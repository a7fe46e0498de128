-- azolla store, SQLite dialect. Timestamps are TEXT in the fixed-width UTC
-- layout 2006-01-02T15:04:05.000000Z so that text order is time order.

CREATE TABLE objectives (
    objective_id        TEXT PRIMARY KEY,
    objective_type      TEXT NOT NULL,
    title               TEXT NOT NULL,
    acceptance_criteria TEXT NOT NULL,
    status              TEXT NOT NULL,
    status_seq          INTEGER NOT NULL,
    blockers            TEXT NOT NULL,
    blocker_ref         TEXT,
    urgency             TEXT NOT NULL,
    due_at              TEXT,
    repository          TEXT,
    base_branch         TEXT,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);
CREATE INDEX objectives_status ON objectives (status, created_at);

-- One readiness event per subject state transition.
CREATE TABLE events (
    event_id         TEXT PRIMARY KEY,
    event_type       TEXT NOT NULL,
    subject_id       TEXT NOT NULL,
    transition_seq   INTEGER NOT NULL,
    processed        INTEGER NOT NULL CHECK (processed IN (0, 1)),
    processed_reason TEXT,
    processed_at     TEXT,
    created_at       TEXT NOT NULL,
    UNIQUE (event_type, subject_id, transition_seq)
);
CREATE INDEX events_unprocessed ON events (processed, created_at);

CREATE TABLE context_snapshots (
    context_snapshot_id TEXT PRIMARY KEY,
    objective_id        TEXT NOT NULL,
    full_prompt_text    TEXT NOT NULL,
    commit_sha          TEXT,
    base_branch         TEXT,
    related_yield_refs  TEXT NOT NULL,
    created_at          TEXT NOT NULL
);

-- One workorder per event.
CREATE TABLE workorders (
    work_order_id       TEXT PRIMARY KEY,
    event_id            TEXT NOT NULL UNIQUE REFERENCES events (event_id),
    objective_id        TEXT NOT NULL,
    diazotroph_type     TEXT NOT NULL,
    context_snapshot_id TEXT NOT NULL REFERENCES context_snapshots (context_snapshot_id),
    branch_name         TEXT NOT NULL,
    budget_ms           INTEGER NOT NULL,
    status              TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    executed_at         TEXT
);
CREATE INDEX workorders_status ON workorders (status, created_at);
CREATE INDEX workorders_objective ON workorders (objective_id, created_at);

-- One output bundle per workorder.
CREATE TABLE output_bundles (
    work_order_id TEXT PRIMARY KEY REFERENCES workorders (work_order_id),
    title         TEXT NOT NULL,
    content       TEXT NOT NULL,
    notes         TEXT NOT NULL,
    metadata      TEXT NOT NULL,
    runner_status TEXT NOT NULL,
    created_at    TEXT NOT NULL
);

-- One run record per workorder (upserted).
CREATE TABLE run_records (
    work_order_id TEXT PRIMARY KEY REFERENCES workorders (work_order_id),
    objective_id  TEXT NOT NULL,
    gate_result   TEXT NOT NULL,
    gate_reason   TEXT NOT NULL,
    commit_sha    TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

CREATE TABLE pause_states (
    pause_state_id      TEXT PRIMARY KEY,
    objective_id        TEXT NOT NULL,
    work_order_id       TEXT,
    reason              TEXT NOT NULL,
    prioritized_actions TEXT NOT NULL,
    created_at          TEXT NOT NULL
);
CREATE INDEX pause_states_objective ON pause_states (objective_id, created_at);

-- The claim/lease table (seed 000). Rows are never deleted: a release expires
-- the lease and bumps claim_version, which therefore only ever grows.
CREATE TABLE claims (
    resource_type    TEXT NOT NULL,
    resource_id      TEXT NOT NULL,
    owner_id         TEXT NOT NULL,
    lease_expires_at TEXT NOT NULL,
    heartbeat_at     TEXT NOT NULL,
    claim_version    INTEGER NOT NULL CHECK (claim_version >= 0),
    released_at      TEXT,
    PRIMARY KEY (resource_type, resource_id)
);

CREATE TABLE capture_buffers (
    capture_buffer_id TEXT PRIMARY KEY,
    source            TEXT NOT NULL,
    content           TEXT NOT NULL,
    status            TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
CREATE INDEX capture_buffers_status ON capture_buffers (status, created_at);
