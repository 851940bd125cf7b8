-- Quiet hours (contract revision 4): per person, when nothing is pushed to their devices.
CREATE TABLE push_quiet_hours (
    space     TEXT    NOT NULL,
    person_id TEXT    NOT NULL,
    start     TEXT    NOT NULL,
    end       TEXT    NOT NULL,
    time_zone TEXT    NOT NULL,
    revision  INTEGER NOT NULL,
    PRIMARY KEY (space, person_id)
) STRICT, WITHOUT ROWID;
