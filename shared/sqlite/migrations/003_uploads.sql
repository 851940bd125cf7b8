-- Uploads: image upload tickets and what became of them.
--
-- Times are TEXT as in 001 (ask.FormatTime: UTC, microseconds, fixed width), and every row keeps
-- the contract revision that last wrote it.

-- An upload is found by its space and the hash of its URL's token (the token itself is never
-- stored), and once stored by its space and id. state moves pending → claimed → stored; a claim
-- that fails goes back to pending. Each move is one conditional UPDATE, so of two racing PUTs only
-- one claims the ticket.
CREATE TABLE uploads (
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
    revision     INTEGER NOT NULL,
    PRIMARY KEY (space, id),
    CHECK (state IN ('pending', 'claimed', 'stored')),
    CHECK ((state = 'stored') = (stored_at IS NOT NULL))
) STRICT;

-- DeleteStaleUploads: tickets never stored, oldest expiry first.
CREATE INDEX uploads_unstored ON uploads (expires_at) WHERE state <> 'stored';
