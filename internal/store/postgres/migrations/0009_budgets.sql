-- Spending caps above the agent (issue 30): an objective's budget in
-- dollars, and what was left of it when each workorder was scheduled.
ALTER TABLE objectives ADD COLUMN budget_usd DOUBLE PRECISION;
ALTER TABLE workorders ADD COLUMN budget_usd_remaining DOUBLE PRECISION;
-- The manifest reads the spend of the bundles written in its period.
CREATE INDEX output_bundles_created_at ON output_bundles (created_at);
