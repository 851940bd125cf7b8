-- Each person's own marks on asks (contract revision 6): when they last opened one (unread
-- state), and a snooze, until a time or until the agent moves. Per person, so they follow the
-- person across devices; unread and snoozed are worked out from these and the ask when read.
CREATE TABLE ask_marks (
    space         TEXT    NOT NULL,
    person_id     TEXT    NOT NULL,
    ask_id        TEXT    NOT NULL,
    read_at       TEXT,
    snoozed_at    TEXT,
    snoozed_until TEXT,
    until_agent   INTEGER NOT NULL DEFAULT 0,
    updated_at    TEXT    NOT NULL,
    revision      INTEGER NOT NULL,
    PRIMARY KEY (space, person_id, ask_id)
) STRICT, WITHOUT ROWID;
