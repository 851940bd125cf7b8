-- Search over every ask's text (contract revision 6, docs/design/search.md).
--
-- One FTS5 row per ask, its rowid the ask's rowid: the ask's one-line title and its text (the
-- words of its prompt and thread, ask.SearchDoc). The store writes it with the ask, in the same
-- transaction, on every create and change; asks stored before this migration are indexed when
-- the database opens (indexMissing). unicode61 splits words at anything but letters and digits,
-- as ask.SearchWords does, and folds case; diacritics are kept, as on DynamoDB.
CREATE VIRTUAL TABLE ask_search USING fts5(title, text, tokenize = 'unicode61 remove_diacritics 0');

-- Search and the filtered history: a space's asks, newest first.
CREATE INDEX asks_created ON asks (space, created_at DESC, id DESC);
