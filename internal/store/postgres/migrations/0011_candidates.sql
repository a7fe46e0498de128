-- Best-of-N (issue 31): the candidate patches of a workorder's run
-- (store.Candidate), keyed by (work_order_id, attempt). The partial unique
-- index lets at most one candidate per workorder be chosen, whatever two
-- choosers racing do. An objective's attempts is how many candidates its
-- runs make (NULL: 1).
CREATE TABLE candidates (
    work_order_id   TEXT NOT NULL REFERENCES workorders (work_order_id),
    attempt         INTEGER NOT NULL CHECK (attempt BETWEEN 1 AND 20),
    generator       TEXT NOT NULL,
    status          TEXT NOT NULL,
    runner_status   TEXT,
    patch           TEXT,
    patch_sha256    TEXT,
    diff_lines      BIGINT CHECK (diff_lines >= 0),
    gate_results    JSONB NOT NULL,
    commands_passed INTEGER NOT NULL CHECK (commands_passed >= 0),
    report          JSONB,
    chosen          BOOLEAN NOT NULL,
    why             TEXT,
    finished_at     TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (work_order_id, attempt)
);
CREATE UNIQUE INDEX candidates_one_chosen ON candidates (work_order_id) WHERE chosen;
ALTER TABLE objectives ADD COLUMN attempts INTEGER CHECK (attempts BETWEEN 1 AND 20);
