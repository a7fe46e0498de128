-- An event's fresh (domain.Event.Fresh): the human who asked for the round
-- asked it to start from the snapshot's commit, leaving the partial work
-- of the round before (objective retry --fresh). 0 for every event before.
ALTER TABLE events ADD COLUMN fresh INTEGER NOT NULL DEFAULT 0 CHECK (fresh IN (0, 1));
