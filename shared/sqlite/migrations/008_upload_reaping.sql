-- Uploads no ask shows are reaped a day after their ticket expired (upload.Service.Reap), and the
-- tickets one credential takes are capped per window (ask.MaxUploadsPerWindow).
--
-- used: an ask shows the upload (UseUpload); the sweep never reaps it. Uploads stored before this
-- migration are taken as used: which asks show them is not known here, and keeping an image an ask
-- may show is the safe side. credential: who asked for the ticket ('' for older ones).
ALTER TABLE uploads ADD COLUMN credential TEXT NOT NULL DEFAULT '';
ALTER TABLE uploads ADD COLUMN used INTEGER NOT NULL DEFAULT 0 CHECK (used IN (0, 1));
UPDATE uploads SET used = 1 WHERE state = 'stored';

-- ReapableUploads: unused uploads, oldest expiry first. (DeleteStaleUploads is gone: reaping
-- forgets tickets never used the same day after expiry, and deletes their bytes too.)
DROP INDEX uploads_unstored;
CREATE INDEX uploads_reapable ON uploads (expires_at, space, id) WHERE used = 0;

-- TakeUploadQuota: tickets counted per space, credential and window (its start, as 001's times).
CREATE TABLE upload_quota (
    space      TEXT    NOT NULL,
    credential TEXT    NOT NULL,
    window     TEXT    NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (space, credential, window)
) STRICT;
