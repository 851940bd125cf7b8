-- Action tokens (contract revision 4): a signed link answers once. A token's nonce is recorded
-- here as it is used; a row may go once its token has expired (the token refuses itself then).
-- Times are TEXT as in 001 (ask.FormatTime).
CREATE TABLE action_uses (
    space      TEXT    NOT NULL,
    nonce      TEXT    NOT NULL,
    expires_at TEXT    NOT NULL,
    revision   INTEGER NOT NULL,
    PRIMARY KEY (space, nonce)
) STRICT, WITHOUT ROWID;
CREATE INDEX action_uses_expiry ON action_uses (expires_at);

-- Where each person of a space gets email notices (their own address; an agent has none).
CREATE TABLE mail_addresses (
    space      TEXT    NOT NULL,
    person_id  TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    email      TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    revision   INTEGER NOT NULL,
    PRIMARY KEY (space, person_id)
) STRICT, WITHOUT ROWID;
