package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Single sign-on's state (ask.SSOStore), migration 018.

// CreateSSOLogin stores a sign-in under way at the provider.
func (d *DB) CreateSSOLogin(ctx context.Context, l *ask.SSOLogin) error {
	_, err := d.w.ExecContext(ctx, `INSERT INTO sso_logins (state_hash, nonce, verifier, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		l.StateHash, l.Nonce, l.Verifier, formatTime(l.CreatedAt), formatTime(l.ExpiresAt))
	if isUnique(err) {
		return fmt.Errorf("sqlite: create sso login: %w", ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("sqlite: create sso login: %w", err)
	}
	return nil
}

// TakeSSOLogin deletes and returns the sign-in with this state hash (one statement: atomic).
func (d *DB) TakeSSOLogin(ctx context.Context, stateHash []byte, now time.Time) (*ask.SSOLogin, error) {
	l := &ask.SSOLogin{}
	var created, expires string
	err := d.w.QueryRowContext(ctx, `DELETE FROM sso_logins WHERE state_hash = ? RETURNING state_hash, nonce, verifier, created_at, expires_at`, stateHash).
		Scan(&l.StateHash, &l.Nonce, &l.Verifier, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: take sso login: %w", err)
	}
	if l.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if l.ExpiresAt, err = parseTime(expires); err != nil {
		return nil, err
	}
	if !now.Before(l.ExpiresAt) {
		return nil, ask.ErrNotFound
	}
	return l, nil
}

const ssoLinkColumns = `id, space, issuer, subject, email, person_id, person_name, role, created_at, last_sign_in_at`

// CreateSSOLink links an identity to a person of a space.
func (d *DB) CreateSSOLink(ctx context.Context, l *ask.SSOLink) error {
	_, err := d.w.ExecContext(ctx, `INSERT INTO sso_links (`+ssoLinkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.Space, l.Issuer, l.Subject, l.Email, l.Person.ID, l.Person.Name, string(l.Role), formatTime(l.CreatedAt), nullTime(l.LastSignInAt))
	if isUnique(err) {
		return fmt.Errorf("sqlite: create sso link: %w", ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("sqlite: create sso link: %w", err)
	}
	return nil
}

// SSOLinkBySubject returns the space's link of an identity, or ask.ErrNotFound.
func (d *DB) SSOLinkBySubject(ctx context.Context, space, issuer, subject string) (*ask.SSOLink, error) {
	l, err := scanSSOLink(d.r.QueryRowContext(ctx, `SELECT `+ssoLinkColumns+` FROM sso_links WHERE space = ? AND issuer = ? AND subject = ?`, space, issuer, subject))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: find sso link: %w", err)
	}
	return l, nil
}

// SSOLinks lists a space's links, oldest first.
func (d *DB) SSOLinks(ctx context.Context, space string) ([]*ask.SSOLink, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+ssoLinkColumns+` FROM sso_links WHERE space = ? ORDER BY created_at, id`, space)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list sso links: %w", err)
	}
	defer rows.Close()
	var out []*ask.SSOLink
	for rows.Next() {
		l, err := scanSSOLink(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list sso links: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// TouchSSOLink records a sign-in through a link.
func (d *DB) TouchSSOLink(ctx context.Context, space, id string, at time.Time) error {
	res, err := d.w.ExecContext(ctx, `UPDATE sso_links SET last_sign_in_at = ? WHERE space = ? AND id = ?`, formatTime(at), space, id)
	if err != nil {
		return fmt.Errorf("sqlite: touch sso link: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ask.ErrNotFound
	}
	return nil
}

// DeleteSSOLink unlinks an identity.
func (d *DB) DeleteSSOLink(ctx context.Context, space, id string) error {
	res, err := d.w.ExecContext(ctx, `DELETE FROM sso_links WHERE space = ? AND id = ?`, space, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete sso link: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ask.ErrNotFound
	}
	return nil
}

// ReapSSO deletes sign-ins past their expiry.
func (d *DB) ReapSSO(ctx context.Context, now time.Time) error {
	if _, err := d.w.ExecContext(ctx, `DELETE FROM sso_logins WHERE expires_at <= ?`, formatTime(now)); err != nil {
		return fmt.Errorf("sqlite: reap sso logins: %w", err)
	}
	return nil
}

func scanSSOLink(row scanner) (*ask.SSOLink, error) {
	l := &ask.SSOLink{}
	var role, created string
	var last sql.NullString
	if err := row.Scan(&l.ID, &l.Space, &l.Issuer, &l.Subject, &l.Email, &l.Person.ID, &l.Person.Name, &role, &created, &last); err != nil {
		return nil, err
	}
	l.Role = ask.Role(role)
	var err error
	if l.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if l.LastSignInAt, err = parseNullTime(last); err != nil {
		return nil, err
	}
	return l, nil
}
