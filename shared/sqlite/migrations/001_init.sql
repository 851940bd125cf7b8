-- Asks, credentials and one-time tickets.
--
-- Times are TEXT as ask.FormatTime writes them: UTC, microseconds, fixed width, so they compare
-- and sort as strings. Every row keeps the contract revision that last wrote it (buildinfo.Revision).

-- An ask is its contract JSON (body) plus the columns the store looks it up and orders it by.
-- version counts committed changes; writes are conditional on it.
CREATE TABLE asks (
    space      TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    revision   INTEGER NOT NULL,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    closed_at  TEXT,
    body       TEXT    NOT NULL,
    PRIMARY KEY (space, id),
    CHECK ((status = 'closed') = (closed_at IS NOT NULL))
) STRICT;

-- OpenAsks: a space's open asks, newest first, ties by id.
CREATE INDEX asks_open ON asks (space, created_at DESC, id DESC) WHERE status <> 'closed';

-- ClosedAsks and history pages: a space's closed asks by close time. Unique, because a page
-- resumes strictly before the last close time it showed: two asks sharing one would be skipped.
CREATE UNIQUE INDEX asks_closed ON asks (space, closed_at DESC) WHERE closed_at IS NOT NULL;

-- A credential is found by the hash of its token; the token itself is never stored.
CREATE TABLE credentials (
    space       TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    token_hash  BLOB    NOT NULL UNIQUE,
    role        TEXT    NOT NULL,
    actor_id    TEXT    NOT NULL,
    actor_name  TEXT    NOT NULL,
    person_id   TEXT    NOT NULL,
    person_name TEXT    NOT NULL,
    created_at  TEXT    NOT NULL,
    revoked_at  TEXT,
    revision    INTEGER NOT NULL,
    PRIMARY KEY (space, id)
) STRICT;

CREATE INDEX credentials_by_space ON credentials (space, created_at, id);

-- A ticket is a one-time pass, found (and deleted) by its hash.
CREATE TABLE tickets (
    hash       BLOB    NOT NULL PRIMARY KEY,
    purpose    TEXT    NOT NULL,
    space      TEXT    NOT NULL,
    actor_id   TEXT    NOT NULL,
    actor_name TEXT    NOT NULL,
    expires_at TEXT    NOT NULL,
    revision   INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
