-- Uploads checked after their bytes arrived (straight to S3 on AWS; the conformance suite runs on
-- every store) can be refused, with the reason the agent is told: state gains 'refused' and the
-- row a refusal. SQLite cannot change a CHECK in place, so the table is made again. UploadByBlob
-- finds an upload by its id (and the hash of its space): uploads_id.
CREATE TABLE uploads_new (
    space        TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    token_hash   BLOB    NOT NULL UNIQUE,
    content_type TEXT    NOT NULL,
    max_bytes    INTEGER NOT NULL,
    state        TEXT    NOT NULL,
    size         INTEGER NOT NULL,
    created_at   TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    stored_at    TEXT,
    refusal      TEXT    NOT NULL DEFAULT '',
    revision     INTEGER NOT NULL,
    PRIMARY KEY (space, id),
    CHECK (state IN ('pending', 'claimed', 'stored', 'refused')),
    CHECK ((state = 'stored') = (stored_at IS NOT NULL)),
    CHECK ((state = 'refused') = (refusal <> ''))
) STRICT;

INSERT INTO uploads_new (space, id, token_hash, content_type, max_bytes, state, size, created_at, expires_at, stored_at, revision)
    SELECT space, id, token_hash, content_type, max_bytes, state, size, created_at, expires_at, stored_at, revision FROM uploads;
DROP TABLE uploads;
ALTER TABLE uploads_new RENAME TO uploads;

CREATE INDEX uploads_unstored ON uploads (expires_at) WHERE state <> 'stored';
CREATE INDEX uploads_id ON uploads (id);
