-- A job's run slots (domain.Job.RunSlots): the RUN_SLOT claims the run
-- handed to the job when it enqueued it, which the control plane holds for
-- the job until it is settled. NULL for every job before, and for a job
-- whose repository has no limit.
ALTER TABLE jobs ADD COLUMN run_slots JSONB;
