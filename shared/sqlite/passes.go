package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Pairing codes and invites (ask.PassStore), migration 017.

const passColumns = `id, kind, space, code_hash, by_id, by_name, by_credential, role, actor_id, actor_name,
	person_id, person_name, email, created_at, expires_at, used_at, device, credential_id, revoked_at`

// CreatePass stores a new pass.
func (d *DB) CreatePass(ctx context.Context, p *ask.Pass) error {
	if len(p.CodeHash) == 0 {
		return errors.New("sqlite: create pass: no code hash")
	}
	_, err := d.w.ExecContext(ctx, `INSERT INTO passes (`+passColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, string(p.Kind), p.Space, p.CodeHash, p.By.ID, p.By.Name, p.ByCredential, string(p.Role),
		p.Actor.ID, p.Actor.Name, p.Person.ID, p.Person.Name, p.Email, formatTime(p.CreatedAt), formatTime(p.ExpiresAt),
		nullTime(p.UsedAt), p.Device, p.CredentialID, nullTime(p.RevokedAt))
	if isUnique(err) {
		return fmt.Errorf("sqlite: create pass %s: %w", p.ID, ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("sqlite: create pass %s: %w", p.ID, err)
	}
	return nil
}

func scanPass(row scanner) (*ask.Pass, error) {
	p := &ask.Pass{}
	var kind, role, created, expires string
	var used, revoked sql.NullString
	err := row.Scan(&p.ID, &kind, &p.Space, &p.CodeHash, &p.By.ID, &p.By.Name, &p.ByCredential, &role,
		&p.Actor.ID, &p.Actor.Name, &p.Person.ID, &p.Person.Name, &p.Email, &created, &expires, &used,
		&p.Device, &p.CredentialID, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: read pass: %w", err)
	}
	p.Kind, p.Role = ask.PassKind(kind), ask.Role(role)
	if p.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if p.ExpiresAt, err = parseTime(expires); err != nil {
		return nil, err
	}
	if p.UsedAt, err = parseNullTime(used); err != nil {
		return nil, err
	}
	if p.RevokedAt, err = parseNullTime(revoked); err != nil {
		return nil, err
	}
	return p, nil
}

// PassByID returns a pass of a space, or ask.ErrNotFound.
func (d *DB) PassByID(ctx context.Context, space, id string) (*ask.Pass, error) {
	return scanPass(d.r.QueryRowContext(ctx, `SELECT `+passColumns+` FROM passes WHERE space = ? AND id = ?`, space, id))
}

// PassByCode returns the pass of this kind whose code has this hash, or ask.ErrNotFound.
func (d *DB) PassByCode(ctx context.Context, kind ask.PassKind, codeHash []byte) (*ask.Pass, error) {
	return scanPass(d.r.QueryRowContext(ctx, `SELECT `+passColumns+` FROM passes WHERE kind = ? AND code_hash = ?`, string(kind), codeHash))
}

// Passes lists a space's passes of a kind, oldest first.
func (d *DB) Passes(ctx context.Context, space string, kind ask.PassKind) ([]*ask.Pass, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+passColumns+` FROM passes WHERE space = ? AND kind = ? ORDER BY created_at, id`, space, string(kind))
	if err != nil {
		return nil, fmt.Errorf("sqlite: list passes: %w", err)
	}
	defer rows.Close()
	var out []*ask.Pass
	for rows.Next() {
		p, err := scanPass(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// UsePass marks a pass used, once: in one write transaction, read, check (ask.PassState), write.
func (d *DB) UsePass(ctx context.Context, kind ask.PassKind, codeHash []byte, at time.Time, device, credentialID string) (*ask.Pass, error) {
	var out *ask.Pass
	err := d.writeTx(ctx, func(tx *Tx) error {
		p, err := scanPass(tx.QueryRowContext(ctx, `SELECT `+passColumns+` FROM passes WHERE kind = ? AND code_hash = ?`, string(kind), codeHash))
		if err != nil {
			return err
		}
		if err := ask.PassState(p, at); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE passes SET used_at = ?, device = ?, credential_id = ?
			WHERE id = ? AND used_at IS NULL AND revoked_at IS NULL`, formatTime(at), device, credentialID, p.ID)
		if err != nil {
			return fmt.Errorf("sqlite: use pass %s: %w", p.ID, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ask.ErrPassUsed // cannot happen inside the write transaction; kept as the rule
		}
		p.UsedAt, p.Device, p.CredentialID = &at, device, credentialID
		out = p
		return nil
	})
	return out, err
}

// RevokePass marks a pass revoked unless it was used.
func (d *DB) RevokePass(ctx context.Context, space, id string, at time.Time) error {
	return d.writeTx(ctx, func(tx *Tx) error {
		p, err := scanPass(tx.QueryRowContext(ctx, `SELECT `+passColumns+` FROM passes WHERE space = ? AND id = ?`, space, id))
		if err != nil {
			return err
		}
		if p.UsedAt != nil {
			return ask.ErrPassUsed
		}
		if p.RevokedAt != nil {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE passes SET revoked_at = ? WHERE id = ?`, formatTime(at), id); err != nil {
			return fmt.Errorf("sqlite: revoke pass %s: %w", id, err)
		}
		return nil
	})
}

// ReapPasses deletes the passes that expired before `before`.
func (d *DB) ReapPasses(ctx context.Context, before time.Time) error {
	if _, err := d.w.ExecContext(ctx, `DELETE FROM passes WHERE expires_at < ?`, formatTime(before)); err != nil {
		return fmt.Errorf("sqlite: reap passes: %w", err)
	}
	return nil
}
