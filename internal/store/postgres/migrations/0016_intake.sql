-- Work that enters from outside the CLI (store.IntakeQuerier): an objective
-- keeps the longer text and the page it came with; each outside item (a
-- forge issue, a posted document) is recorded once by its primary key, in
-- the transaction that creates what it became; each command comment once,
-- with what came of it; and each source's poll keeps its cursor.
ALTER TABLE objectives ADD COLUMN description TEXT;
ALTER TABLE objectives ADD COLUMN provenance TEXT;

CREATE TABLE intake_items (
    source            TEXT NOT NULL,
    external_id       TEXT NOT NULL,
    kind              TEXT NOT NULL CHECK (kind IN ('objective', 'capture')),
    objective_id      TEXT,
    capture_id        TEXT,
    url               TEXT,
    author            TEXT,
    repository        TEXT,
    status_comment_id TEXT,
    status_digest     TEXT,
    edited_at         TIMESTAMPTZ,
    closed            BOOLEAN NOT NULL,
    created_at        TIMESTAMPTZ NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (source, external_id),
    CHECK ((kind = 'objective') = (objective_id IS NOT NULL)),
    CHECK ((kind = 'capture') = (capture_id IS NOT NULL))
);
-- One item per objective: an objective's issue is found by it.
CREATE UNIQUE INDEX intake_items_objective ON intake_items (objective_id) WHERE objective_id IS NOT NULL;

CREATE TABLE forge_commands (
    source       TEXT NOT NULL,
    comment_id   TEXT NOT NULL,
    objective_id TEXT NOT NULL,
    thread       TEXT NOT NULL,
    command      TEXT NOT NULL,
    argument     TEXT,
    author       TEXT NOT NULL,
    trusted      BOOLEAN NOT NULL,
    trust_reason TEXT NOT NULL,
    result       TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (source, comment_id)
);
CREATE INDEX forge_commands_objective ON forge_commands (objective_id, created_at);

CREATE TABLE intake_cursors (
    source     TEXT PRIMARY KEY,
    cursor     TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
