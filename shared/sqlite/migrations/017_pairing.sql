-- Pairing a device and inviting a teammate (issue 28 item 4; ask.Pass). A code is kept only as
-- its SHA-256 hash. Times are TEXT as in 001 (ask.FormatTime).
CREATE TABLE passes (
    id             TEXT NOT NULL PRIMARY KEY,
    kind           TEXT NOT NULL,
    space          TEXT NOT NULL,
    code_hash      BLOB NOT NULL,
    by_id          TEXT NOT NULL,
    by_name        TEXT NOT NULL,
    by_credential  TEXT NOT NULL,
    role           TEXT NOT NULL,
    actor_id       TEXT NOT NULL,
    actor_name     TEXT NOT NULL,
    person_id      TEXT NOT NULL,
    person_name    TEXT NOT NULL,
    email          TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL,
    used_at        TEXT,
    device         TEXT NOT NULL DEFAULT '',
    credential_id  TEXT NOT NULL DEFAULT '',
    revoked_at     TEXT
) STRICT;

CREATE UNIQUE INDEX passes_code ON passes (kind, code_hash);
CREATE INDEX passes_space ON passes (space, kind, created_at);
CREATE INDEX passes_expiry ON passes (expires_at);
