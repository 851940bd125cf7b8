package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// pool is a database/sql pool whose queries run as statements prepared once and kept, by their
// text: the driver otherwise parses and plans the SQL on every call, which profiled at a sixth of
// the server's CPU while people replied to waiting agents (bench/mcpwait). Every query here is a
// constant string, so the cache holds a few dozen statements; it stops growing at maxStatements
// all the same. Migrations (scripts of several statements) run on the plain *sql.DB.
type pool struct {
	*sql.DB

	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

const maxStatements = 256

func newPool(db *sql.DB) *pool { return &pool{DB: db, stmts: map[string]*sql.Stmt{}} }

// kept is query's kept statement, or nil.
func (p *pool) kept(query string) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stmts[query]
}

// prepared is query's kept statement, prepared now if need be; nil (and the query runs
// unprepared) when it cannot be: the unprepared call then reports the error itself. It takes a
// connection of the pool to prepare: never call it while holding the pool's only one (in a
// transaction on the writer), which is why Tx only uses statements already kept.
func (p *pool) prepared(ctx context.Context, query string) *sql.Stmt {
	p.mu.Lock()
	st := p.stmts[query]
	full := len(p.stmts) >= maxStatements
	p.mu.Unlock()
	if st != nil || full {
		return st
	}
	st, err := p.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if kept := p.stmts[query]; kept != nil {
		st.Close()
		return kept
	}
	p.stmts[query] = st
	return st
}

// QueryContext runs query as its kept statement.
func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.prepared(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.DB.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query as its kept statement.
func (p *pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.prepared(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.DB.QueryRowContext(ctx, query, args...)
}

// ExecContext runs query as its kept statement.
func (p *pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.prepared(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return p.DB.ExecContext(ctx, query, args...)
}

// BeginTx starts a transaction whose queries use the pool's kept statements.
func (p *pool) BeginTx(ctx context.Context, opts *sql.TxOptions) (*Tx, error) {
	tx, err := p.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &Tx{Tx: tx, p: p}, nil
}

// keep prepares the statements a transaction ran unprepared, once it has ended and given its
// connection back: the next transaction finds them kept.
func (p *pool) keep(ctx context.Context, t *Tx) {
	for _, q := range t.unkept {
		p.prepared(ctx, q)
	}
}

// Close closes the kept statements and the pool. The statements are closed after the lock is let
// go: closing one waits for its calls in flight, and such a call may wait for the writer's
// connection, held by a transaction that needs the lock to look up its statements.
func (p *pool) Close() error {
	p.mu.Lock()
	stmts := p.stmts
	p.stmts = map[string]*sql.Stmt{}
	p.mu.Unlock()
	for _, st := range stmts {
		st.Close()
	}
	return p.DB.Close()
}

// Tx is a transaction on a pool: its queries run as the pool's kept statements, bound to the
// transaction's connection (database/sql reuses the statement already prepared there).
type Tx struct {
	*sql.Tx
	p      *pool
	unkept []string // queries run unprepared: the pool prepares them after the transaction
}

// stmt is query's kept statement bound to the transaction, or nil the first time (then noted).
func (t *Tx) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := t.p.kept(query); st != nil {
		return t.Tx.StmtContext(ctx, st)
	}
	t.unkept = append(t.unkept, query)
	return nil
}

// ExecContext runs query in the transaction as its kept statement.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query in the transaction as its kept statement.
func (t *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query in the transaction as its kept statement.
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}
