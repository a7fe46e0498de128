-- A pull request's feedback as azolla judged it (store.PullRequestFeedback):
-- each review or line comment taken into a round, or not taken because its
-- author may not steer an agent. Written once: the primary key makes a
-- retry's or a second worker's write a no-op. taken_by names the round's
-- TICKET_READY event; only trusted feedback may have one, which the CHECK
-- holds whatever writes the row. Timestamps are TEXT in the fixed-width
-- layout of 0001.
CREATE TABLE pull_request_feedback (
    objective_id TEXT NOT NULL REFERENCES objectives (objective_id),
    number       INTEGER NOT NULL CHECK (number >= 1),
    feedback_id  TEXT NOT NULL,
    kind         TEXT NOT NULL,
    author       TEXT NOT NULL,
    state        TEXT,
    summary      TEXT NOT NULL,
    trusted      INTEGER NOT NULL CHECK (trusted IN (0, 1)),
    trust_reason TEXT NOT NULL,
    taken_by     TEXT,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (objective_id, number, feedback_id),
    CHECK (taken_by IS NULL OR trusted = 1)
);
-- ListPullRequestFeedback reads an objective's in the order recorded.
CREATE INDEX pull_request_feedback_order ON pull_request_feedback (objective_id, created_at, feedback_id);
