package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Search (contract revision 6): an FTS5 table, ask_search (migration 020), holds each ask's
// title and text under the ask's rowid. indexAsk writes it in the transaction that writes the
// ask, so the two never disagree; SearchAsks joins it back to the asks.

// indexAsk writes a's row of the search index in tx, after a's row of asks was written.
func indexAsk(ctx context.Context, tx *Tx, a *ask.Ask) error {
	title, text := ask.SearchDoc(a)
	var rowid int64
	if err := tx.QueryRowContext(ctx, `SELECT rowid FROM asks WHERE space = ? AND id = ?`, a.Space, a.ID).Scan(&rowid); err != nil {
		return fmt.Errorf("search index %s: %w", a.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM ask_search WHERE rowid = ?`, rowid); err != nil {
		return fmt.Errorf("search index %s: %w", a.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO ask_search (rowid, title, text) VALUES (?, ?, ?)`, rowid, title, text); err != nil {
		return fmt.Errorf("search index %s: %w", a.ID, err)
	}
	return nil
}

// indexMissing indexes every ask the search index does not hold yet: those stored before
// migration 020. It runs when the database opens, in one transaction; once done it finds none.
func indexMissing(ctx context.Context, w *sql.DB) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT a.rowid, a.space, a.version, a.credential_id, a.turns, a.body FROM asks a
		WHERE NOT EXISTS (SELECT 1 FROM ask_search s WHERE s.rowid = a.rowid)`)
	if err != nil {
		return err
	}
	type doc struct {
		rowid       int64
		title, text string
	}
	var docs []doc
	for rows.Next() {
		var rowid int64
		var version int
		var space, cred, turns string
		var body []byte
		if err := rows.Scan(&rowid, &space, &version, &cred, &turns, &body); err != nil {
			rows.Close()
			return err
		}
		a, err := decodeAsk(space, version, cred, turns, body)
		if err != nil {
			rows.Close()
			return err
		}
		title, text := ask.SearchDoc(a)
		docs = append(docs, doc{rowid, title, text})
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if len(docs) == 0 {
		return nil
	}
	for _, d := range docs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO ask_search (rowid, title, text) VALUES (?, ?, ?)`, d.rowid, d.title, d.text); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// ftsQuery turns search terms into an FTS5 query: each a quoted phrase with a prefix star, all
// of them required. Terms are words of letters and digits (ask.SearchWords); the quoting (with
// any `"` doubled) makes even other input a phrase, never FTS5 syntax.
func ftsQuery(terms []string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"*`
	}
	return strings.Join(parts, " ")
}

// SearchAsks implements ask.Store: the page's rowids first (the index or FTS5, the filters on
// the asks' own columns, the order), then the columns and the text of those rows alone.
func (d *DB) SearchAsks(ctx context.Context, space string, q ask.SearchQuery) (ask.SearchResult, error) {
	var b strings.Builder
	var args []any
	b.WriteString(`WITH page AS (SELECT a.rowid AS rid, a.created_at AS created, a.id AS id FROM asks a`)
	if len(q.Terms) > 0 {
		b.WriteString(` JOIN ask_search ON ask_search.rowid = a.rowid WHERE ask_search MATCH ? AND a.space = ?`)
		args = append(args, ftsQuery(q.Terms), space)
	} else {
		b.WriteString(` WHERE a.space = ?`)
		args = append(args, space)
	}
	if q.Kind != "" {
		b.WriteString(` AND a.kind = ?`)
		args = append(args, q.Kind)
	}
	// Written out, not bound, so that the planner can take the partial indexes (asks_open,
	// asks_closed_created): the states are the store's own constants.
	switch q.State {
	case ask.StateOpen:
		b.WriteString(` AND a.status <> 'closed'`)
	case ask.StateYours:
		b.WriteString(` AND a.status <> 'closed' AND a.status = 'awaiting_human'`)
	case ask.StateAgents:
		b.WriteString(` AND a.status <> 'closed' AND a.status = 'awaiting_agent'`)
	case ask.StateClosed:
		b.WriteString(` AND a.status = 'closed'`)
	}
	if q.Project != "" {
		b.WriteString(` AND a.project = ?`)
		args = append(args, q.Project)
	}
	if q.After != nil {
		at := formatTime(q.After.CreatedAt)
		b.WriteString(` AND (a.created_at < ? OR (a.created_at = ? AND a.id < ?))`)
		args = append(args, at, at, q.After.ID)
	}
	b.WriteString(` ORDER BY a.created_at DESC, a.id DESC LIMIT ?)
		SELECT a.id, a.kind, a.status, a.project, a.created_at, a.updated_at, a.closed_at,
			coalesce(s.title, ''), `)
	args = append(args, q.Limit+1)
	if len(q.Terms) > 0 {
		b.WriteString(`coalesce(s.text, '')`)
	} else {
		b.WriteString(`''`)
	}
	b.WriteString(` FROM page JOIN asks a ON a.rowid = page.rid LEFT JOIN ask_search s ON s.rowid = page.rid
		ORDER BY page.created DESC, page.id DESC`)

	rows, err := d.r.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return ask.SearchResult{}, fmt.Errorf("sqlite: search: %w", err)
	}
	defer rows.Close()
	var res ask.SearchResult
	for rows.Next() {
		var r ask.SearchRow
		var created, updated string
		var closed sql.NullString
		if err := rows.Scan(&r.ID, &r.Kind, &r.Status, &r.Project, &created, &updated, &closed, &r.Title, &r.Text); err != nil {
			return ask.SearchResult{}, fmt.Errorf("sqlite: search: %w", err)
		}
		if r.CreatedAt, err = parseTime(created); err != nil {
			return ask.SearchResult{}, err
		}
		if r.UpdatedAt, err = parseTime(updated); err != nil {
			return ask.SearchResult{}, err
		}
		if closed.Valid {
			t, err := parseTime(closed.String)
			if err != nil {
				return ask.SearchResult{}, err
			}
			r.ClosedAt = &t
		}
		res.Rows = append(res.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return ask.SearchResult{}, fmt.Errorf("sqlite: search: %w", err)
	}
	if len(res.Rows) > q.Limit {
		res.Rows = res.Rows[:q.Limit]
		last := res.Rows[q.Limit-1]
		res.Next = &ask.SearchCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return res, nil
}
