package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

const credentialColumns = `space, id, token_hash, role, actor_id, actor_name, person_id, person_name, created_at, revoked_at, last_used_at, client_id`

// CreateCredential stores a new credential. A token hash already stored is refused.
func (d *DB) CreateCredential(ctx context.Context, c *ask.Credential) error {
	if len(c.TokenHash) == 0 {
		return fmt.Errorf("sqlite: create credential %s: no token hash", c.ID)
	}
	_, err := d.w.ExecContext(ctx, `INSERT INTO credentials (`+credentialColumns+`, revision)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.Space, c.ID, c.TokenHash, c.Role, c.Actor.ID, c.Actor.Name, c.Person.ID, c.Person.Name,
		formatTime(c.CreatedAt), nullTime(c.RevokedAt), nullTime(c.LastUsedAt), c.Client, buildinfo.Revision)
	if isUnique(err) {
		return fmt.Errorf("sqlite: create credential %s: its id or token hash is %w (%v)", c.ID, ask.ErrAlreadyStored, err)
	} else if err != nil {
		return fmt.Errorf("sqlite: create credential %s: %w", c.ID, err)
	}
	return nil
}

// CredentialByTokenHash returns the credential with this token hash, revoked or not, or
// ask.EUnauthorized.
func (d *DB) CredentialByTokenHash(ctx context.Context, hash []byte) (*ask.Credential, error) {
	if len(hash) == 0 {
		return nil, ask.UnknownToken()
	}
	row := d.r.QueryRowContext(ctx, `SELECT `+credentialColumns+` FROM credentials WHERE token_hash = ?`, hash)
	c, err := scanCredential(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.UnknownToken()
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: find credential: %w", err)
	}
	return c, nil
}

// CredentialByID returns a credential of a space by its id, revoked or not, or ask.ENotFound.
func (d *DB) CredentialByID(ctx context.Context, space, id string) (*ask.Credential, error) {
	row := d.r.QueryRowContext(ctx, `SELECT `+credentialColumns+` FROM credentials WHERE space = ? AND id = ?`, space, id)
	c, err := scanCredential(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.CredentialNotFound(id)
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: find credential %s: %w", id, err)
	}
	return c, nil
}

// TouchCredential records when a credential was last used; an unknown id changes nothing.
func (d *DB) TouchCredential(ctx context.Context, space, id string, at time.Time) error {
	_, err := d.w.ExecContext(ctx, `UPDATE credentials SET last_used_at = ?, revision = ? WHERE space = ? AND id = ?`,
		formatTime(at), buildinfo.Revision, space, id)
	if err != nil {
		return fmt.Errorf("sqlite: touch credential %s: %w", id, err)
	}
	return nil
}

// Credentials lists a space's credentials, oldest first.
func (d *DB) Credentials(ctx context.Context, space string) ([]*ask.Credential, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+credentialColumns+` FROM credentials
		WHERE space = ? ORDER BY created_at, id`, space)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list credentials: %w", err)
	}
	defer rows.Close()
	var out []*ask.Credential
	for rows.Next() {
		c, err := scanCredential(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list credentials: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list credentials: %w", err)
	}
	return out, nil
}

// RevokeCredential marks a credential of a space revoked, or returns ask.ENotFound. Revoking it
// again keeps the first revocation time.
func (d *DB) RevokeCredential(ctx context.Context, space, id string, at time.Time) error {
	res, err := d.w.ExecContext(ctx, `UPDATE credentials SET revoked_at = coalesce(revoked_at, ?), revision = ?
		WHERE space = ? AND id = ?`, formatTime(at), buildinfo.Revision, space, id)
	if err != nil {
		return fmt.Errorf("sqlite: revoke credential %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: revoke credential %s: %w", id, err)
	}
	if n == 0 {
		return ask.CredentialNotFound(id)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanCredential(row scanner) (*ask.Credential, error) {
	c := &ask.Credential{}
	var created string
	var revoked, used sql.NullString
	err := row.Scan(&c.Space, &c.ID, &c.TokenHash, &c.Role, &c.Actor.ID, &c.Actor.Name,
		&c.Person.ID, &c.Person.Name, &created, &revoked, &used, &c.Client)
	if err != nil {
		return nil, err
	}
	if c.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if c.RevokedAt, err = parseNullTime(revoked); err != nil {
		return nil, err
	}
	if c.LastUsedAt, err = parseNullTime(used); err != nil {
		return nil, err
	}
	return c, nil
}
