-- azolla store, PostgreSQL dialect.

CREATE TABLE objectives (
    objective_id        TEXT PRIMARY KEY,
    objective_type      TEXT NOT NULL,
    title               TEXT NOT NULL,
    acceptance_criteria JSONB NOT NULL,
    status              TEXT NOT NULL,
    status_seq          BIGINT NOT NULL,
    blockers            JSONB NOT NULL,
    blocker_ref         TEXT,
    urgency             TEXT NOT NULL,
    due_at              TIMESTAMPTZ,
    repository          TEXT,
    base_branch         TEXT,
    created_at          TIMESTAMPTZ NOT NULL,
    updated_at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX objectives_status ON objectives (status, created_at);

-- One readiness event per subject state transition.
CREATE TABLE events (
    event_id         TEXT PRIMARY KEY,
    event_type       TEXT NOT NULL,
    subject_id       TEXT NOT NULL,
    transition_seq   BIGINT NOT NULL,
    processed        BOOLEAN NOT NULL,
    processed_reason TEXT,
    processed_at     TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL,
    UNIQUE (event_type, subject_id, transition_seq)
);
CREATE INDEX events_unprocessed ON events (processed, created_at);

CREATE TABLE context_snapshots (
    context_snapshot_id TEXT PRIMARY KEY,
    objective_id        TEXT NOT NULL,
    full_prompt_text    TEXT NOT NULL,
    commit_sha          TEXT,
    base_branch         TEXT,
    related_yield_refs  JSONB NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL
);

-- One workorder per event.
CREATE TABLE workorders (
    work_order_id       TEXT PRIMARY KEY,
    event_id            TEXT NOT NULL UNIQUE REFERENCES events (event_id),
    objective_id        TEXT NOT NULL,
    diazotroph_type     TEXT NOT NULL,
    context_snapshot_id TEXT NOT NULL REFERENCES context_snapshots (context_snapshot_id),
    branch_name         TEXT NOT NULL,
    budget_ms           BIGINT NOT NULL,
    status              TEXT NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL,
    executed_at         TIMESTAMPTZ
);
CREATE INDEX workorders_status ON workorders (status, created_at);
CREATE INDEX workorders_objective ON workorders (objective_id, created_at);

-- One output bundle per workorder.
CREATE TABLE output_bundles (
    work_order_id TEXT PRIMARY KEY REFERENCES workorders (work_order_id),
    title         TEXT NOT NULL,
    content       TEXT NOT NULL,
    notes         TEXT NOT NULL,
    metadata      JSONB NOT NULL,
    runner_status TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);

-- One run record per workorder (upserted).
CREATE TABLE run_records (
    work_order_id TEXT PRIMARY KEY REFERENCES workorders (work_order_id),
    objective_id  TEXT NOT NULL,
    gate_result   TEXT NOT NULL,
    gate_reason   TEXT NOT NULL,
    commit_sha    TEXT,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE pause_states (
    pause_state_id      TEXT PRIMARY KEY,
    objective_id        TEXT NOT NULL,
    work_order_id       TEXT,
    reason              TEXT NOT NULL,
    prioritized_actions JSONB NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX pause_states_objective ON pause_states (objective_id, created_at);

-- The claim/lease table (seed 000). Rows are never deleted: a release expires
-- the lease and bumps claim_version, which therefore only ever grows.
CREATE TABLE claims (
    resource_type    TEXT NOT NULL,
    resource_id      TEXT NOT NULL,
    owner_id         TEXT NOT NULL,
    lease_expires_at TIMESTAMPTZ NOT NULL,
    heartbeat_at     TIMESTAMPTZ NOT NULL,
    claim_version    BIGINT NOT NULL CHECK (claim_version >= 0),
    released_at      TIMESTAMPTZ,
    PRIMARY KEY (resource_type, resource_id)
);

CREATE TABLE capture_buffers (
    capture_buffer_id TEXT PRIMARY KEY,
    source            TEXT NOT NULL,
    content           TEXT NOT NULL,
    status            TEXT NOT NULL,
    created_at        TIMESTAMPTZ NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL
);
CREATE INDEX capture_buffers_status ON capture_buffers (status, created_at);
