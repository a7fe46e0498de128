-- A workorder's one run transcript (store.Transcript): what its run said,
-- redacted, capped to executor.transcript_max and gzip-compressed. The
-- primary key keeps it one per workorder; a retried run replaces it.
-- Timestamps are TEXT in the fixed-width layout of 0001.
CREATE TABLE transcripts (
    work_order_id  TEXT PRIMARY KEY REFERENCES workorders (work_order_id),
    gzip           BLOB NOT NULL,
    bytes          INTEGER NOT NULL CHECK (bytes >= 0),
    original_bytes INTEGER NOT NULL CHECK (original_bytes >= 0),
    truncated      INTEGER NOT NULL CHECK (truncated IN (0, 1)),
    created_at     TEXT NOT NULL
);
-- ListTranscripts pages in (created_at, work_order_id) order.
CREATE INDEX transcripts_page ON transcripts (created_at, work_order_id);
