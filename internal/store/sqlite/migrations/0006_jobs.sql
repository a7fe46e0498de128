-- Seed 004: the control plane's jobs, their attempts and leases, the
-- messages of the database transport and the remote workers' tokens.
-- Timestamps are TEXT in the fixed-width layout of 0001, so text order is
-- time order and the reaper's `lease_expires_at <= $now` compares right.

-- The canonical record of a job. work_order_id is unique where set: one job
-- per workorder, however often its Run is retried. enqueue_id names the
-- current enqueue; a message carrying another one is stale.
CREATE TABLE jobs (
    job_id               TEXT PRIMARY KEY,
    job_type             TEXT NOT NULL,
    stream               TEXT NOT NULL,
    status               TEXT NOT NULL,
    payload              TEXT NOT NULL,
    result               TEXT,
    error                TEXT,
    attempt_count        INTEGER NOT NULL CHECK (attempt_count >= 0),
    max_attempts         INTEGER NOT NULL CHECK (max_attempts >= 1),
    work_order_id        TEXT,
    enqueue_id           TEXT NOT NULL,
    message_id           TEXT,
    available_at         TEXT NOT NULL,
    activity_workflow_id TEXT,
    activity_run_id      TEXT,
    activity_id          TEXT,
    notified_at          TEXT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);
CREATE UNIQUE INDEX jobs_work_order ON jobs (work_order_id) WHERE work_order_id IS NOT NULL;
-- Listings by status (the reaper's QUEUED jobs whose message may be gone).
CREATE INDEX jobs_status ON jobs (status, created_at, job_id);
-- Settled jobs whose activity has not heard of it yet; the predicate is
-- written as ListJobs writes it so SQLite uses the index.
CREATE INDEX jobs_unnotified ON jobs (created_at, job_id)
    WHERE notified_at IS NULL AND activity_workflow_id IS NOT NULL AND status IN ('SUCCEEDED', 'FAILED', 'DEAD_LETTERED');

-- One row per attempt. At most one RUNNING attempt per job, whatever the
-- code above the database gets wrong.
CREATE TABLE job_attempts (
    attempt_id     TEXT PRIMARY KEY,
    job_id         TEXT NOT NULL REFERENCES jobs (job_id),
    worker_id      TEXT NOT NULL,
    attempt_number INTEGER NOT NULL CHECK (attempt_number >= 1),
    status         TEXT NOT NULL,
    stream         TEXT NOT NULL,
    message_id     TEXT NOT NULL,
    started_at     TEXT NOT NULL,
    finished_at    TEXT,
    error          TEXT,
    next_status    TEXT,
    UNIQUE (job_id, attempt_number)
);
CREATE UNIQUE INDEX job_attempts_one_running ON job_attempts (job_id) WHERE status = 'RUNNING';

-- One lease per attempt, kept (released_at set) after the attempt closes so
-- a repeated completion presenting its token is recognized.
CREATE TABLE job_leases (
    attempt_id       TEXT PRIMARY KEY REFERENCES job_attempts (attempt_id),
    job_id           TEXT NOT NULL REFERENCES jobs (job_id),
    worker_id        TEXT NOT NULL,
    lease_token      TEXT NOT NULL,
    lease_expires_at TEXT NOT NULL,
    heartbeat_at     TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    released_at      TEXT
);
CREATE INDEX job_leases_job ON job_leases (job_id, created_at);
-- The reaper's read: unreleased leases by expiry.
CREATE INDEX job_leases_unreleased ON job_leases (lease_expires_at, attempt_id) WHERE released_at IS NULL;

-- The database transport's queue. message_id is a zero-padded number from
-- job_message_seq, so text order is enqueue order; acknowledged messages are
-- deleted, and the counter never hands out an id twice.
CREATE TABLE job_messages (
    stream       TEXT NOT NULL,
    message_id   TEXT NOT NULL,
    job_id       TEXT NOT NULL,
    enqueue_id   TEXT NOT NULL,
    delivered_at TEXT,
    consumer     TEXT,
    deliveries   INTEGER NOT NULL CHECK (deliveries >= 0),
    created_at   TEXT NOT NULL,
    PRIMARY KEY (stream, message_id)
);
CREATE INDEX job_messages_receive ON job_messages (stream, delivered_at, message_id);
CREATE TABLE job_message_seq (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    last INTEGER NOT NULL
);
INSERT INTO job_message_seq (id, last) VALUES (1, 0);

-- Remote workers' credentials: only the token's hash is stored, and a
-- worker has at most one live token.
CREATE TABLE worker_tokens (
    token_hash TEXT PRIMARY KEY,
    worker_id  TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE UNIQUE INDEX worker_tokens_live ON worker_tokens (worker_id) WHERE revoked_at IS NULL;
