-- Rules that decide a space's approvals without asking (contract revision 3). The scope's
-- narrowings are '' when left out. Times are TEXT as in 001 (ask.FormatTime).
CREATE TABLE rules (
    space           TEXT    NOT NULL,
    id              TEXT    NOT NULL,
    effect          TEXT    NOT NULL,
    tool            TEXT    NOT NULL,
    command_prefix  TEXT    NOT NULL,
    path_pattern    TEXT    NOT NULL,
    domain          TEXT    NOT NULL,
    project         TEXT    NOT NULL,
    agent           TEXT    NOT NULL,
    created_by_id   TEXT    NOT NULL,
    created_by_name TEXT    NOT NULL,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL,
    matches         INTEGER NOT NULL DEFAULT 0,
    last_matched_at TEXT,
    revision        INTEGER NOT NULL,
    PRIMARY KEY (space, id)
) STRICT, WITHOUT ROWID;

-- A space's rules, newest first.
CREATE INDEX rules_newest ON rules (space, created_at DESC, id DESC);
