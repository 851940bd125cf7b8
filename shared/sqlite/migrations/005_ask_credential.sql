-- The credential that raised an ask, so that list_open_asks can give an agent its own asks back.
-- Asks raised before this migration name none.
ALTER TABLE asks ADD COLUMN credential_id TEXT NOT NULL DEFAULT '';
