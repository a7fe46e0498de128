-- Events remember the human decision that emitted them (a retry's comment
-- reaches the next run's snapshot); pause states name the kind of each
-- prioritized action (JSON array, NULL for records written before).
ALTER TABLE events ADD COLUMN decided_by TEXT;
ALTER TABLE events ADD COLUMN comment TEXT;
ALTER TABLE pause_states ADD COLUMN action_kinds TEXT;
