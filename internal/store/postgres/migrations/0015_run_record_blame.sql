-- A run record's blame (store.RunRecord.Blame): ENVIRONMENT when the FAIL
-- is the repository's environment's (its setup failed, a gate command
-- could not start, a run hit a sandbox limit), not the patch's. NULL for
-- every verdict before, and for the patch's own.
ALTER TABLE run_records ADD COLUMN blame TEXT;
