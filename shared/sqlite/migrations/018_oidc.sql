-- Single sign-on through an OpenID Connect provider (issue 28 item 4; shared/sso).

-- Sign-ins under way at the provider, from /auth/oidc/start until the callback takes them (once).
-- The state is kept only as its SHA-256; the nonce and PKCE verifier live 10 minutes at most.
CREATE TABLE sso_logins (
    state_hash BLOB NOT NULL PRIMARY KEY,
    nonce      TEXT NOT NULL,
    verifier   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
) STRICT;

CREATE INDEX sso_logins_expiry ON sso_logins (expires_at);

-- Which identity at the provider (issuer, subject) is which person of a space.
CREATE TABLE sso_links (
    id              TEXT NOT NULL, -- ask.SSOLinkID(issuer, subject): the same in every space
    space           TEXT NOT NULL,
    issuer          TEXT NOT NULL,
    subject         TEXT NOT NULL,
    email           TEXT NOT NULL,
    person_id       TEXT NOT NULL,
    person_name     TEXT NOT NULL,
    role            TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    last_sign_in_at TEXT,
    PRIMARY KEY (space, id),
    UNIQUE (space, issuer, subject)
) STRICT;
