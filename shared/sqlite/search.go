package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Search (contract revision 6): an FTS5 table, ask_search (migration 020), holds each ask's
// title and text under the ask's rowid; SearchAsks joins it back to the asks.
//
// The index follows the asks a moment behind (migration 023). Writing an ask's FTS5 row took
// about half of a reply's time in the store (BenchmarkReplyHTTP; docs/benchmarks.md), on the
// path a person and an agent both wait on. So the transaction that writes an ask only records
// its rowid in search_pending (markForIndex); the indexer writes the index rows indexDelay
// later, a batch per transaction, and a search first indexes whatever is still pending. A search
// therefore sees every ask committed before it, and nothing is lost to a crash: the pending
// rowids are in the same transaction as the ask, and the next start indexes them.

const (
	// indexDelay is how long after a change the indexer waits, so that it runs after the wake
	// the change caused rather than beside it, and takes a burst of changes at once.
	indexDelay = 250 * time.Millisecond
	// indexBatch bounds one indexing transaction, so a writer waits at most for this many.
	indexBatch = 32
)

// markForIndex records, in the transaction that wrote a's row of asks, that its row of the
// search index is to be written again.
func markForIndex(ctx context.Context, tx *Tx, a *ask.Ask) error {
	_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO search_pending (rowid) SELECT rowid FROM asks WHERE space = ? AND id = ?`, a.Space, a.ID)
	if err != nil {
		return fmt.Errorf("search index %s: %w", a.ID, err)
	}
	return nil
}

// indexSoon tells the indexer that an ask was written; it never blocks.
func (d *DB) indexSoon() {
	select {
	case d.ixWake <- struct{}{}:
	default:
	}
}

// indexer writes the pending index rows indexDelay after it is told of a change, until Close.
func (d *DB) indexer() {
	defer close(d.ixEnded)
	for {
		select {
		case <-d.ixWake:
		case <-d.ixStop:
			return
		}
		select {
		case <-time.After(indexDelay):
		case <-d.ixStop:
			return
		}
		for {
			n, err := d.indexPending(context.Background(), indexBatch)
			if err != nil || n < indexBatch {
				break // a failure is tried again at the next change, or by the next search
			}
			select {
			case <-d.ixStop:
				return
			default:
			}
		}
	}
}

// flushIndex writes every pending index row, in batches, before a search reads the index.
func (d *DB) flushIndex(ctx context.Context) error {
	var pending bool
	if err := d.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM search_pending)`).Scan(&pending); err != nil || !pending {
		return err
	}
	for {
		n, err := d.indexPending(ctx, indexBatch)
		if err != nil || n < indexBatch {
			return err
		}
	}
}

// indexPending writes the index rows of up to limit pending asks in one transaction, and
// returns how many it took.
func (d *DB) indexPending(ctx context.Context, limit int) (int, error) {
	n := 0
	err := d.writeTx(ctx, func(tx *Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT p.rowid, a.space, a.version, a.credential_id, a.turns, a.body
			FROM search_pending p JOIN asks a ON a.rowid = p.rowid LIMIT ?`, limit)
		if err != nil {
			return err
		}
		type doc struct {
			rowid       int64
			title, text string
		}
		var docs []doc
		for rows.Next() {
			var d doc
			var version int
			var space, cred, turns string
			var body []byte
			if err := rows.Scan(&d.rowid, &space, &version, &cred, &turns, &body); err != nil {
				rows.Close()
				return err
			}
			a, err := decodeAsk(space, version, cred, turns, body)
			if err != nil {
				rows.Close()
				return err
			}
			d.title, d.text = ask.SearchDoc(a)
			docs = append(docs, d)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		for _, d := range docs {
			if _, err := tx.ExecContext(ctx, `DELETE FROM ask_search WHERE rowid = ?`, d.rowid); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO ask_search (rowid, title, text) VALUES (?, ?, ?)`, d.rowid, d.title, d.text); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM search_pending WHERE rowid = ?`, d.rowid); err != nil {
				return err
			}
		}
		n = len(docs)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: search index: %w", err)
	}
	return n, nil
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
	if err := d.flushIndex(ctx); err != nil {
		return ask.SearchResult{}, err
	}
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
