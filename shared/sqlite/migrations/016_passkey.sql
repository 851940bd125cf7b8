-- Passkeys (issue 28 item 4): WebAuthn credentials a person signs in to the inbox with, and the
-- ceremonies started and not yet finished. A ceremony keeps only the SHA-256 of its challenge.
-- Times are TEXT as in 001 (ask.FormatTime).

CREATE TABLE passkeys (
    id            TEXT NOT NULL PRIMARY KEY,
    space         TEXT NOT NULL,
    person_id     TEXT NOT NULL,
    person_name   TEXT NOT NULL,
    role          TEXT NOT NULL,
    name          TEXT NOT NULL,
    credential_id BLOB NOT NULL UNIQUE,
    credential    BLOB NOT NULL, -- go-webauthn's Credential as JSON (public key, sign counter, flags)
    created_at    TEXT NOT NULL,
    last_used_at  TEXT
) STRICT;

CREATE INDEX passkeys_space ON passkeys (space, created_at);

CREATE TABLE passkey_ceremonies (
    id             TEXT NOT NULL PRIMARY KEY,
    kind           TEXT NOT NULL,
    space          TEXT NOT NULL,
    person_id      TEXT NOT NULL,
    person_name    TEXT NOT NULL,
    role           TEXT NOT NULL,
    credential_id  TEXT NOT NULL,
    name           TEXT NOT NULL,
    challenge_hash BLOB NOT NULL,
    session        BLOB NOT NULL,
    expires_at     TEXT NOT NULL
) STRICT;
