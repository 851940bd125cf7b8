-- Web Push: the person's devices, each the browser's push subscription (contract revision 2).
-- Times are TEXT as in 001 (ask.FormatTime: UTC, microseconds, fixed width).
CREATE TABLE push_subscriptions (
    space         TEXT    NOT NULL,
    id            TEXT    NOT NULL,
    person_id     TEXT    NOT NULL,
    credential_id TEXT    NOT NULL,
    endpoint      TEXT    NOT NULL,
    p256dh        TEXT    NOT NULL,
    auth          TEXT    NOT NULL,
    created_at    TEXT    NOT NULL,
    revision      INTEGER NOT NULL,
    PRIMARY KEY (space, id)
) STRICT, WITHOUT ROWID;
