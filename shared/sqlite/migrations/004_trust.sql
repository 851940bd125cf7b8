-- Trust: what each credential opened, so that revoking it ends that too; and when it was last used.
--
-- Times are TEXT as in 001 (ask.FormatTime: UTC, microseconds, fixed width).

-- When the gate last let a credential in (to within ask.LastUsedEvery), for `loopback token list`.
ALTER TABLE credentials ADD COLUMN last_used_at TEXT;

-- The credential a ticket was issued to: a ticket opens nothing once that credential is revoked.
-- Tickets issued before this migration name none, and are refused (they last a minute anyway).
ALTER TABLE tickets ADD COLUMN credential_id TEXT NOT NULL DEFAULT '';

-- The credential that started a task: revoking it ends the task.
ALTER TABLE tasks ADD COLUMN credential_id TEXT NOT NULL DEFAULT '';
