-- Best-of-N (issue 31): the candidate patches of a workorder's run
-- (store.Candidate), keyed by (work_order_id, attempt). The partial unique
-- index lets at most one candidate per workorder be chosen, whatever two
-- choosers racing do. gate_results and report are JSON text; chosen is 0
-- or 1. Timestamps are TEXT in the fixed-width layout of 0001. An
-- objective's attempts is how many candidates its runs make (NULL: 1).
CREATE TABLE candidates (
    work_order_id   TEXT NOT NULL REFERENCES workorders (work_order_id),
    attempt         INTEGER NOT NULL CHECK (attempt BETWEEN 1 AND 20),
    generator       TEXT NOT NULL,
    status          TEXT NOT NULL,
    runner_status   TEXT,
    patch           TEXT,
    patch_sha256    TEXT,
    diff_lines      INTEGER CHECK (diff_lines >= 0),
    gate_results    TEXT NOT NULL,
    commands_passed INTEGER NOT NULL CHECK (commands_passed >= 0),
    report          TEXT,
    chosen          INTEGER NOT NULL CHECK (chosen IN (0, 1)),
    why             TEXT,
    finished_at     TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (work_order_id, attempt)
);
CREATE UNIQUE INDEX candidates_one_chosen ON candidates (work_order_id) WHERE chosen = 1;
ALTER TABLE objectives ADD COLUMN attempts INTEGER CHECK (attempts BETWEEN 1 AND 20);
