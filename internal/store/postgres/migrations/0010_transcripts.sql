-- A workorder's one run transcript (store.Transcript): what its run said,
-- redacted, capped to executor.transcript_max and gzip-compressed. The
-- primary key keeps it one per workorder; a retried run replaces it.
CREATE TABLE transcripts (
    work_order_id  TEXT PRIMARY KEY REFERENCES workorders (work_order_id),
    gzip           BYTEA NOT NULL,
    bytes          BIGINT NOT NULL CHECK (bytes >= 0),
    original_bytes BIGINT NOT NULL CHECK (original_bytes >= 0),
    truncated      BOOLEAN NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL
);
-- ListTranscripts pages in (created_at, work_order_id) order.
CREATE INDEX transcripts_page ON transcripts (created_at, work_order_id);
