package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// CreateAsk stores a new ask at version 1. An id already stored in the space is refused
// (ask.ErrAlreadyStored).
func (d *DB) CreateAsk(ctx context.Context, a *ask.Ask) error {
	return d.createAsks(ctx, a)
}

// createAsks stores new asks in one transaction; each gets version 1 once it commits.
func (d *DB) createAsks(ctx context.Context, asks ...*ask.Ask) error {
	rows := make([]ask.Ask, len(asks))
	err := d.writeTx(ctx, func(tx *Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO asks
			(space, id, kind, status, version, revision, created_at, updated_at, closed_at, credential_id, turns, body, due_at, project)
			VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, a := range asks {
			rows[i] = *a
			if err := closeUniquely(ctx, tx, &rows[i]); err != nil {
				return err
			}
			if err := insertAsk(ctx, stmt, &rows[i]); err != nil {
				return err
			}
			if err := markForIndex(ctx, tx, &rows[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: create ask: %w", err)
	}
	d.indexSoon()
	for i, a := range asks {
		a.Version, a.ClosedAt, a.UpdatedAt = 1, rows[i].ClosedAt, rows[i].UpdatedAt
	}
	return nil
}

func insertAsk(ctx context.Context, stmt *sql.Stmt, a *ask.Ask) error {
	body, err := a.MarshalJSON() // what json.Marshal gives, without its second pass over it
	if err != nil {
		return fmt.Errorf("encode %s: %w", a.ID, err)
	}
	_, err = stmt.ExecContext(ctx, a.Space, a.ID, a.Kind, a.Status, buildinfo.Revision,
		formatTime(a.CreatedAt), formatTime(a.UpdatedAt), nullTime(a.ClosedAt), a.CredentialID, ask.TurnCredentials(a), string(body), nullTime(a.DueAt()), a.Project)
	if isUnique(err) {
		return fmt.Errorf("ask %s: %w in the space (%v)", a.ID, ask.ErrAlreadyStored, err)
	} else if err != nil {
		return fmt.Errorf("%s: %w", a.ID, err)
	}
	return nil
}

// FindAsk returns the ask with this id in this space, or ask.ErrNotFound.
func (d *DB) FindAsk(ctx context.Context, space, id string) (*ask.Ask, error) {
	var version int
	var cred, turns string
	var body []byte
	err := d.r.QueryRowContext(ctx, `SELECT version, credential_id, turns, body FROM asks WHERE space = ? AND id = ?`, space, id).
		Scan(&version, &cred, &turns, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: find ask %s: %w", id, err)
	}
	return decodeAsk(space, version, cred, turns, body)
}

// AskWaiting reports the stored ask's waiting flag (ask.Store.AskWaiting), read by SQLite from the
// row's JSON without decoding the ask; ask.ErrNotFound for an ask not stored.
func (d *DB) AskWaiting(ctx context.Context, space, id string) (bool, error) {
	var waiting sql.NullBool
	err := d.r.QueryRowContext(ctx, `SELECT json_extract(body, '$.waiting') FROM asks WHERE space = ? AND id = ?`, space, id).
		Scan(&waiting)
	if errors.Is(err, sql.ErrNoRows) {
		return false, ask.ErrNotFound
	} else if err != nil {
		return false, fmt.Errorf("sqlite: ask %s waiting: %w", id, err)
	}
	return waiting.Bool, nil
}

// ChangeAsk reads an ask, applies fn and writes the result, all in one write transaction
// (ask.Store.ChangeAsk): the read is the writer's own, so nothing can change the ask between it and the
// write, and the pages it reads are the ones the write then changes, already in hand. An error
// from fn is returned as it is, and nothing is written.
func (d *DB) ChangeAsk(ctx context.Context, space, id string, fn func(*ask.Ask) error) (*ask.Ask, json.RawMessage, error) {
	var a *ask.Ask
	var w written
	var fnErr error
	err := d.writeTx(ctx, func(tx *Tx) error {
		var version int
		var cred, turns string
		var stored []byte
		err := tx.QueryRowContext(ctx, `SELECT version, credential_id, turns, body FROM asks WHERE space = ? AND id = ?`, space, id).
			Scan(&version, &cred, &turns, &stored)
		if errors.Is(err, sql.ErrNoRows) {
			return ask.ErrNotFound
		} else if err != nil {
			return err
		}
		if a, err = decodeAsk(space, version, cred, turns, stored); err != nil {
			return err
		}
		if fnErr = fn(a); fnErr != nil {
			return fnErr
		}
		w, err = writeAsk(ctx, tx, a)
		return err
	})
	switch {
	case fnErr != nil:
		return a, nil, fnErr
	case errors.Is(err, ask.ErrNotFound):
		return nil, nil, err
	case err != nil:
		return nil, nil, fmt.Errorf("sqlite: change ask %s: %w", id, err)
	}
	d.indexSoon()
	return a, w.committed(a), nil
}

// written is what writeAsk wrote: the ask's body and its close and update times (a close time
// made unique may have moved both).
type written struct {
	body      json.RawMessage
	closedAt  *time.Time
	updatedAt time.Time
}

// committed brings a up to what was written, once the transaction committed, and returns the body.
func (w written) committed(a *ask.Ask) json.RawMessage {
	a.Version++
	a.ClosedAt, a.UpdatedAt = w.closedAt, w.updatedAt
	return w.body
}

// writeAsk writes a changed ask in tx if its stored version is still a.Version; a itself is left
// as it is until the transaction commits (written.committed). The write is conditional in the
// UPDATE itself (WHERE version = ?): the row is read again only when that writes nothing, to tell
// a conflict from an ask that is not stored. A close time is taken as it is unless the space's
// unique index of close times refuses it (SQLite then undoes that statement alone): only then
// are the taken times walked (closeUniquely) and the row written again.
func writeAsk(ctx context.Context, tx *Tx, a *ask.Ask) (written, error) {
	row := *a
	body, n, err := updateAsk(ctx, tx, a, &row)
	if isUnique(err) && row.ClosedAt != nil {
		if err := closeUniquely(ctx, tx, &row); err != nil {
			return written{}, err
		}
		body, n, err = updateAsk(ctx, tx, a, &row)
	}
	if err != nil {
		return written{}, err
	}
	if n != 1 {
		var one int
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM asks WHERE space = ? AND id = ?`, a.Space, a.ID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return written{}, ask.ErrNotFound
		} else if err != nil {
			return written{}, err
		}
		return written{}, ask.ErrVersionConflict
	}
	if err := markForIndex(ctx, tx, &row); err != nil {
		return written{}, err
	}
	return written{body: body, closedAt: row.ClosedAt, updatedAt: row.UpdatedAt}, nil
}

// updateAsk writes row over the stored a if that is still at a.Version, returning the body it
// wrote and how many rows it changed (0 or 1).
func updateAsk(ctx context.Context, tx *Tx, a, row *ask.Ask) (json.RawMessage, int64, error) {
	body, err := row.MarshalJSON() // what json.Marshal gives, without its second pass over it
	if err != nil {
		return nil, 0, fmt.Errorf("encode: %w", err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE asks SET
			kind = ?, status = ?, version = version + 1, revision = ?,
			created_at = ?, updated_at = ?, closed_at = ?, turns = ?, body = ?, due_at = ?, project = ?
		WHERE space = ? AND id = ? AND version = ?`,
		row.Kind, row.Status, buildinfo.Revision,
		formatTime(row.CreatedAt), formatTime(row.UpdatedAt), nullTime(row.ClosedAt), ask.TurnCredentials(row), string(body), nullTime(row.DueAt()), row.Project,
		a.Space, a.ID, a.Version)
	if err != nil {
		return nil, 0, err
	}
	n, err := res.RowsAffected()
	return body, n, err
}

// closeUniquely gives a closed ask a close time no other ask of its space has. A close time
// already stored for the ask is its own, and unique: the walk finds it free and keeps it.
func closeUniquely(ctx context.Context, tx *Tx, a *ask.Ask) error {
	if a.ClosedAt == nil {
		return nil
	}
	// The space's close times from a.ClosedAt on, in order: walk them while they are taken. They
	// are unique, so the first one past the candidate leaves it free.
	rows, err := tx.QueryContext(ctx, `SELECT closed_at FROM asks
		WHERE space = ? AND closed_at >= ? AND id <> ? ORDER BY closed_at`,
		a.Space, formatTime(*a.ClosedAt), a.ID)
	if err != nil {
		return fmt.Errorf("close times: %w", err)
	}
	defer rows.Close()
	t, moved := ask.Truncate(*a.ClosedAt), false
	for rows.Next() {
		var taken string
		if err := rows.Scan(&taken); err != nil {
			return fmt.Errorf("close times: %w", err)
		}
		if taken != formatTime(t) {
			break
		}
		t, moved = t.Add(time.Microsecond), true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("close times: %w", err)
	}
	if moved {
		a.ClosedAt, a.UpdatedAt = &t, t
	}
	return nil
}

// OpenAsks returns every open ask of a space, newest first; asks created at the same time come
// in descending order of id, so the order is total.
func (d *DB) OpenAsks(ctx context.Context, space string) ([]*ask.Ask, error) {
	return d.queryAsks(ctx, space, `SELECT version, credential_id, turns, body FROM asks
		WHERE space = ? AND status <> 'closed'
		ORDER BY created_at DESC, id DESC`, space)
}

// ClosedAsksBy returns up to limit asks of a space raised with the credential credentialID that
// closed at or after since, most recently closed first (the index asks_closed_by).
func (d *DB) ClosedAsksBy(ctx context.Context, space, credentialID string, since time.Time, limit int) ([]*ask.Ask, error) {
	if limit < 1 || credentialID == "" {
		return nil, nil
	}
	return d.queryAsks(ctx, space, `SELECT version, credential_id, turns, body FROM asks
		WHERE space = ? AND credential_id = ? AND closed_at IS NOT NULL AND closed_at >= ?
		ORDER BY closed_at DESC
		LIMIT ?`, space, credentialID, formatTime(since), limit)
}

// OpenAsksWire is OpenAsks in the contract's JSON, as the rows hold it (ask.Store).
func (d *DB) OpenAsksWire(ctx context.Context, space string) ([]ask.WireAsk, error) {
	return d.queryWire(ctx, space, `SELECT id, version, revision, credential_id, body FROM asks
		WHERE space = ? AND status <> 'closed'
		ORDER BY created_at DESC, id DESC`, space)
}

// ClosedAsksWire returns up to limit closed asks of a space that closed strictly before
// `before`, most recently closed first, in the contract's JSON as the rows hold it (ask.Store).
func (d *DB) ClosedAsksWire(ctx context.Context, space string, before time.Time, limit int) ([]ask.WireAsk, error) {
	if limit < 1 {
		return nil, nil
	}
	return d.queryWire(ctx, space, `SELECT id, version, revision, credential_id, body FROM asks
		WHERE space = ? AND closed_at IS NOT NULL AND closed_at < ?
		ORDER BY closed_at DESC
		LIMIT ?`, space, formatTime(before), limit)
}

// queryWire lists asks' bodies as they are stored. A body is exactly Ask.MarshalJSON's output
// when this revision wrote it (insertAsk, ChangeAsk); a row of another revision is decoded and
// encoded again, so a snapshot is always the current revision's shape.
func (d *DB) queryWire(ctx context.Context, space, query string, args ...any) ([]ask.WireAsk, error) {
	rows, err := d.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list asks: %w", err)
	}
	defer rows.Close()
	var out []ask.WireAsk
	for rows.Next() {
		var w ask.WireAsk
		var revision int
		var cred string
		var body []byte // the driver hands TEXT over as a string; Scan copies it, once
		if err := rows.Scan(&w.ID, &w.Version, &revision, &cred, &body); err != nil {
			return nil, fmt.Errorf("sqlite: list asks: %w", err)
		}
		if revision != buildinfo.Revision {
			a, err := decodeAsk(space, w.Version, cred, "", body) // its JSON alone: turns stay out of it
			if err != nil {
				return nil, err
			}
			if w, err = ask.ToWire(a); err != nil {
				return nil, err
			}
		} else {
			w.JSON = body
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list asks: %w", err)
	}
	return out, nil
}

func (d *DB) queryAsks(ctx context.Context, space, query string, args ...any) ([]*ask.Ask, error) {
	rows, err := d.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list asks: %w", err)
	}
	defer rows.Close()
	var out []*ask.Ask
	for rows.Next() {
		var version int
		var cred, turns string
		var body []byte
		if err := rows.Scan(&version, &cred, &turns, &body); err != nil {
			return nil, fmt.Errorf("sqlite: list asks: %w", err)
		}
		a, err := decodeAsk(space, version, cred, turns, body)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list asks: %w", err)
	}
	return out, nil
}

func decodeAsk(space string, version int, credentialID, turns string, body []byte) (*ask.Ask, error) {
	a := &ask.Ask{}
	if err := json.Unmarshal(body, a); err != nil {
		return nil, fmt.Errorf("sqlite: decode a stored ask of space %s: %w", space, err)
	}
	a.Space, a.Version, a.CredentialID = space, version, credentialID
	if err := ask.SetTurnCredentials(a, turns); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return a, nil
}

// OpenUsage counts a space's open asks and their Charges, and the part the credential raised
// (ask.Store), from the rows' bodies without decoding them: a body is the ask's contract
// JSON, whose Size ask.Size counts (in Go: far quicker than SQLite's string functions).
func (d *DB) OpenUsage(ctx context.Context, space, credentialID string) (ask.OpenUsage, error) {
	var u ask.OpenUsage
	// INDEXED BY: left to itself, the planner walks asks_project, every ask the space ever had.
	rows, err := d.r.QueryContext(ctx, `SELECT credential_id, body FROM asks INDEXED BY asks_open WHERE space = ? AND status <> 'closed'`, space)
	if err != nil {
		return u, fmt.Errorf("sqlite: open usage of space %s: %w", space, err)
	}
	defer rows.Close()
	var body sql.RawBytes
	var cred string
	for rows.Next() {
		if err := rows.Scan(&cred, &body); err != nil {
			return ask.OpenUsage{}, fmt.Errorf("sqlite: open usage of space %s: %w", space, err)
		}
		charge := ask.Charge(ask.Size(body))
		u.Asks++
		u.Charge += charge
		if cred == credentialID {
			u.CredentialAsks++
			u.CredentialCharge += charge
		}
	}
	if err := rows.Err(); err != nil {
		return ask.OpenUsage{}, fmt.Errorf("sqlite: open usage of space %s: %w", space, err)
	}
	return u, nil
}
