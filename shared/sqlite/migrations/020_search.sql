-- Search over every ask's text (contract revision 6, docs/design/search.md).
--
-- One FTS5 row per ask, its rowid the ask's rowid: the ask's one-line title and its text (the
-- words of its prompt and thread, ask.SearchDoc). The store writes it with the ask, in the same
-- transaction, on every create and change; asks stored before this migration are indexed when
-- the database opens (indexMissing). unicode61 splits words at anything but letters and digits,
-- as ask.SearchWords does, and folds case; diacritics are kept, as on DynamoDB.
CREATE VIRTUAL TABLE ask_search USING fts5(title, text, tokenize = 'unicode61 remove_diacritics 0');

-- Each ask's project (ask.Ask.Project, '' for none), written with the ask on every change, so
-- that search and the filtered history filter by it without reading the body.
ALTER TABLE asks ADD COLUMN project TEXT NOT NULL DEFAULT '';
UPDATE asks SET project = coalesce(json_extract(body, '$.project'), '');

-- The filtered history: a space's closed asks, newest first (its open ones walk asks_open), and
-- a project's asks. Partial, so that the snapshot's walk of open asks keeps to asks_open.
CREATE INDEX asks_closed_created ON asks (space, created_at DESC, id DESC) WHERE status = 'closed';
CREATE INDEX asks_project ON asks (space, project, created_at DESC, id DESC);
