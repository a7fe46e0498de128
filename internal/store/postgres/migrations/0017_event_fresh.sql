-- An event's fresh (domain.Event.Fresh): the human who asked for the round
-- asked it to start from the snapshot's commit, leaving the partial work
-- of the round before (objective retry --fresh). false for every event
-- before.
ALTER TABLE events ADD COLUMN fresh BOOLEAN NOT NULL DEFAULT false;
