-- An objective's one pull request on its forge (store.PullRequest). The
-- primary key is the objective: one pull request per objective, whatever
-- retries and racing workers do. A pull request on a forge belongs to one
-- objective (its head is the objective's branch), so (forge, repository,
-- number) is unique too. review_cursor is '' before the first review is
-- taken, never NULL, so that its compare-and-swap is a plain equality.
-- Timestamps are TEXT in the fixed-width layout of 0001.
CREATE TABLE pull_requests (
    objective_id  TEXT PRIMARY KEY REFERENCES objectives (objective_id),
    work_order_id TEXT NOT NULL REFERENCES workorders (work_order_id),
    forge         TEXT NOT NULL,
    repository    TEXT NOT NULL,
    number        INTEGER NOT NULL CHECK (number >= 1),
    url           TEXT NOT NULL,
    head_branch   TEXT NOT NULL,
    base_branch   TEXT NOT NULL,
    head_sha      TEXT NOT NULL,
    state         TEXT NOT NULL,
    adopted       INTEGER NOT NULL CHECK (adopted IN (0, 1)),
    review_cursor TEXT NOT NULL,
    checks_sha    TEXT,
    rounds        INTEGER NOT NULL CHECK (rounds >= 1),
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    merged_at     TEXT,
    closed_at     TEXT,
    UNIQUE (forge, repository, number)
);
-- ListPullRequests pages in (created_at, objective_id) order.
CREATE INDEX pull_requests_page ON pull_requests (created_at, objective_id);
