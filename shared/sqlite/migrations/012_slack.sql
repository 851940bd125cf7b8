-- Slack (contract revision 4): linked Slack identities, one-time link codes, where each ask was
-- posted (so every later change updates the message in place), and a space's channel.
-- Times are TEXT as in 001 (ask.FormatTime: UTC, microseconds, fixed width).
CREATE TABLE slack_links (
    space         TEXT NOT NULL,
    person_id     TEXT NOT NULL,
    person_name   TEXT NOT NULL,
    credential_id TEXT NOT NULL,
    team_id       TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    user_name     TEXT NOT NULL,
    linked_at     TEXT NOT NULL,
    PRIMARY KEY (space, person_id)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX slack_links_by_user ON slack_links (team_id, user_id);

CREATE TABLE slack_codes (
    hash          BLOB NOT NULL PRIMARY KEY,
    space         TEXT NOT NULL,
    person_id     TEXT NOT NULL,
    person_name   TEXT NOT NULL,
    credential_id TEXT NOT NULL,
    expires_at    TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE slack_messages (
    space   TEXT NOT NULL,
    ask_id  TEXT NOT NULL,
    channel TEXT NOT NULL,
    ts      TEXT NOT NULL,
    to_user TEXT NOT NULL,
    PRIMARY KEY (space, ask_id, channel)
) STRICT, WITHOUT ROWID;

CREATE TABLE slack_spaces (
    space   TEXT NOT NULL PRIMARY KEY,
    channel TEXT NOT NULL
) STRICT, WITHOUT ROWID;
