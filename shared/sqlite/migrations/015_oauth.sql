-- MCP OAuth (issue 28): Loopback's authorization server (shared/oauth). Tokens and codes are kept
-- only as SHA-256 hashes, as credentials are. Times are TEXT as in 001 (ask.FormatTime).

-- The OAuth client an agent credential was made for ('' for one made any other way).
ALTER TABLE credentials ADD COLUMN client_id TEXT NOT NULL DEFAULT '';

-- Clients registered by Dynamic Client Registration (RFC 7591). Clients that name themselves by a
-- metadata document's URL are not stored.
CREATE TABLE oauth_clients (
    id            TEXT NOT NULL PRIMARY KEY,
    name          TEXT NOT NULL,
    redirect_uris TEXT NOT NULL, -- a JSON array
    created_at    TEXT NOT NULL
) STRICT;

-- Requests to connect, from /oauth/authorize until the code is redeemed (ask.AuthRequest).
CREATE TABLE oauth_requests (
    id             TEXT    NOT NULL PRIMARY KEY,
    client_id      TEXT    NOT NULL,
    client_name    TEXT    NOT NULL,
    client_host    TEXT    NOT NULL,
    redirect_uri   TEXT    NOT NULL,
    state          TEXT    NOT NULL,
    code_challenge TEXT    NOT NULL,
    resource       TEXT    NOT NULL,
    scope          TEXT    NOT NULL,
    browser_hash   BLOB    NOT NULL,
    match_code     TEXT    NOT NULL,
    created_at     TEXT    NOT NULL,
    expires_at     TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    space          TEXT    NOT NULL DEFAULT '',
    credential_id  TEXT    NOT NULL DEFAULT '',
    decided_by_id  TEXT    NOT NULL DEFAULT '',
    decided_by_name TEXT   NOT NULL DEFAULT '',
    decided_at     TEXT,
    code_hash      BLOB,
    version        INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX oauth_requests_code ON oauth_requests (code_hash) WHERE code_hash IS NOT NULL;
CREATE INDEX oauth_requests_expiry ON oauth_requests (expires_at);

-- Access and refresh tokens (ask.OAuthToken).
CREATE TABLE oauth_tokens (
    hash          BLOB NOT NULL PRIMARY KEY,
    kind          TEXT NOT NULL,
    space         TEXT NOT NULL,
    credential_id TEXT NOT NULL,
    client_id     TEXT NOT NULL,
    resource      TEXT NOT NULL,
    scope         TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    rotated_at    TEXT
) STRICT, WITHOUT ROWID;

CREATE INDEX oauth_tokens_credential ON oauth_tokens (space, credential_id, kind);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
