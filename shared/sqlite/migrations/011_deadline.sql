-- Deadlines and escalation (contract revision 4). Each open ask's due time (ask.Ask.DueAt: its
-- deadline, or its escalation while unanswered), written with the ask on every change, NULL when
-- nothing is due; the deadline clock reads the soonest across every space (DueAsks).
ALTER TABLE asks ADD COLUMN due_at TEXT;
CREATE INDEX asks_due ON asks (due_at) WHERE due_at IS NOT NULL;

-- A space's escalation, set by a person: after_minutes 0 is off. Times are TEXT as in 001.
CREATE TABLE escalations (
    space          TEXT    NOT NULL PRIMARY KEY,
    after_minutes  INTEGER NOT NULL,
    to_people      INTEGER NOT NULL,
    slack_channel  TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    updated_by_id  TEXT    NOT NULL,
    updated_by_name TEXT   NOT NULL
) STRICT, WITHOUT ROWID;
