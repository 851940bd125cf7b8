package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Passkeys (migration 016): ask.PasskeyStore.

const passkeyColumns = `id, space, person_id, person_name, role, name, credential_id, credential, created_at, last_used_at`

// CreatePasskey stores a new passkey; a credential id already stored is refused.
func (d *DB) CreatePasskey(ctx context.Context, p *ask.Passkey) error {
	if len(p.CredentialID) == 0 {
		return fmt.Errorf("sqlite: create passkey %s: no credential id", p.ID)
	}
	_, err := d.w.ExecContext(ctx, `INSERT INTO passkeys (`+passkeyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Space, p.Person.ID, p.Person.Name, string(p.Role), p.Name, p.CredentialID, p.Credential,
		formatTime(p.CreatedAt), nullTime(p.LastUsedAt))
	if isUnique(err) {
		return fmt.Errorf("sqlite: create passkey %s: its id or credential id is %w (%v)", p.ID, ask.ErrAlreadyStored, err)
	} else if err != nil {
		return fmt.Errorf("sqlite: create passkey %s: %w", p.ID, err)
	}
	return nil
}

func scanPasskey(row interface{ Scan(...any) error }) (*ask.Passkey, error) {
	var (
		p        ask.Passkey
		role     string
		created  string
		lastUsed sql.NullString
	)
	if err := row.Scan(&p.ID, &p.Space, &p.Person.ID, &p.Person.Name, &role, &p.Name, &p.CredentialID, &p.Credential, &created, &lastUsed); err != nil {
		return nil, err
	}
	p.Role = ask.Role(role)
	var err error
	if p.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if p.LastUsedAt, err = parseNullTime(lastUsed); err != nil {
		return nil, err
	}
	return &p, nil
}

// PasskeyByCredentialID returns the passkey with this WebAuthn credential id, or ask.ErrNotFound.
func (d *DB) PasskeyByCredentialID(ctx context.Context, credentialID []byte) (*ask.Passkey, error) {
	if len(credentialID) == 0 {
		return nil, ask.ErrNotFound
	}
	p, err := scanPasskey(d.r.QueryRowContext(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE credential_id = ?`, credentialID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: find passkey: %w", err)
	}
	return p, nil
}

// Passkeys lists a space's passkeys, oldest first.
func (d *DB) Passkeys(ctx context.Context, space string) ([]*ask.Passkey, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE space = ? ORDER BY created_at, id`, space)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list passkeys: %w", err)
	}
	defer rows.Close()
	var out []*ask.Passkey
	for rows.Next() {
		p, err := scanPasskey(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list passkeys: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list passkeys: %w", err)
	}
	return out, nil
}

// UsePasskey records a sign-in with a passkey.
func (d *DB) UsePasskey(ctx context.Context, space, id string, credential []byte, at time.Time) error {
	res, err := d.w.ExecContext(ctx, `UPDATE passkeys SET credential = ?, last_used_at = ? WHERE space = ? AND id = ?`,
		credential, formatTime(at), space, id)
	if err != nil {
		return fmt.Errorf("sqlite: use passkey %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: use passkey %s: %w", id, err)
	} else if n == 0 {
		return ask.ErrNotFound
	}
	return nil
}

// DeletePasskey removes a passkey of a space.
func (d *DB) DeletePasskey(ctx context.Context, space, id string) error {
	res, err := d.w.ExecContext(ctx, `DELETE FROM passkeys WHERE space = ? AND id = ?`, space, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete passkey %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: delete passkey %s: %w", id, err)
	} else if n == 0 {
		return ask.ErrNotFound
	}
	return nil
}

// CreatePasskeyCeremony stores a started ceremony.
func (d *DB) CreatePasskeyCeremony(ctx context.Context, c *ask.PasskeyCeremony) error {
	if len(c.ChallengeHash) == 0 {
		return fmt.Errorf("sqlite: create passkey ceremony %s: no challenge hash", c.ID)
	}
	_, err := d.w.ExecContext(ctx, `INSERT INTO passkey_ceremonies
		(id, kind, space, person_id, person_name, role, credential_id, name, challenge_hash, session, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, string(c.Kind), c.Space, c.Person.ID, c.Person.Name, string(c.Role), c.CredentialID, c.Name,
		c.ChallengeHash, c.Session, formatTime(c.ExpiresAt))
	if isUnique(err) {
		return fmt.Errorf("sqlite: create passkey ceremony %s: %w (%v)", c.ID, ask.ErrAlreadyStored, err)
	} else if err != nil {
		return fmt.Errorf("sqlite: create passkey ceremony %s: %w", c.ID, err)
	}
	// Ceremonies nobody finished go with the next one started.
	if _, err := d.w.ExecContext(ctx, `DELETE FROM passkey_ceremonies WHERE expires_at <= ?`, formatTime(time.Now())); err != nil {
		return fmt.Errorf("sqlite: reap passkey ceremonies: %w", err)
	}
	return nil
}

// ConsumePasskeyCeremony deletes and returns a ceremony: one statement finds and deletes it, so
// of two racing callers only one gets it. An expired one is deleted all the same.
func (d *DB) ConsumePasskeyCeremony(ctx context.Context, id string, kind ask.PasskeyCeremonyKind, now time.Time) (*ask.PasskeyCeremony, error) {
	c := &ask.PasskeyCeremony{}
	var k, role, expires string
	err := d.w.QueryRowContext(ctx, `DELETE FROM passkey_ceremonies WHERE id = ? AND kind = ?
		RETURNING id, kind, space, person_id, person_name, role, credential_id, name, challenge_hash, session, expires_at`, id, string(kind)).
		Scan(&c.ID, &k, &c.Space, &c.Person.ID, &c.Person.Name, &role, &c.CredentialID, &c.Name, &c.ChallengeHash, &c.Session, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: consume passkey ceremony: %w", err)
	}
	c.Kind, c.Role = ask.PasskeyCeremonyKind(k), ask.Role(role)
	if c.ExpiresAt, err = parseTime(expires); err != nil {
		return nil, fmt.Errorf("sqlite: consume passkey ceremony: %w", err)
	}
	if !now.Before(c.ExpiresAt) {
		return nil, ask.ErrNotFound
	}
	return c, nil
}
