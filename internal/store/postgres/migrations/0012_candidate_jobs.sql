-- Best-of-N on remote workers: a candidate of a workorder's run may be a
-- control-plane job of its own (docs/remote-workers.md). candidate is its
-- number, NULL for the workorder's own job. A workorder keeps at most one
-- job of its own and gets at most one per candidate, however often each
-- activity is retried: the unique key of 0006 becomes two partial ones.
ALTER TABLE jobs ADD COLUMN candidate INTEGER CHECK (candidate BETWEEN 1 AND 20);
DROP INDEX jobs_work_order;
CREATE UNIQUE INDEX jobs_work_order ON jobs (work_order_id) WHERE work_order_id IS NOT NULL AND candidate IS NULL;
CREATE UNIQUE INDEX jobs_work_order_candidate ON jobs (work_order_id, candidate) WHERE candidate IS NOT NULL;
