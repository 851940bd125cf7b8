-- The search index follows the asks a moment behind (docs/design/search.md, issue 30): a write of
-- an ask records its rowid here, in its own transaction, and the indexer (or a search, before it
-- reads) writes the ask's row of ask_search and removes the rowid, in one transaction. So the
-- reply that a person and an agent wait on no longer pays for FTS5.
CREATE TABLE search_pending (rowid INTEGER PRIMARY KEY);

-- Asks the index does not hold yet (none, unless a build before migration 020 wrote them).
INSERT INTO search_pending (rowid)
	SELECT a.rowid FROM asks a WHERE NOT EXISTS (SELECT 1 FROM ask_search s WHERE s.rowid = a.rowid);
