-- Objectives choose their patch generator and may carry a patch (issue 4).
ALTER TABLE objectives ADD COLUMN generator TEXT;
ALTER TABLE objectives ADD COLUMN patch TEXT;
