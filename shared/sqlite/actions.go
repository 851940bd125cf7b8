package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// UseAction records that the action token with this nonce was used (migration 013). The primary
// key refuses a second record, so of two racing uses only one inserts.
func (d *DB) UseAction(ctx context.Context, space, nonce string, expiresAt time.Time) error {
	_, err := d.w.ExecContext(ctx, `INSERT INTO action_uses (space, nonce, expires_at, revision) VALUES (?, ?, ?, ?)`,
		space, nonce, formatTime(expiresAt), buildinfo.Revision)
	if isUnique(err) {
		return fmt.Errorf("sqlite: action %s: %w", nonce, ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("sqlite: use action: %w", err)
	}
	return nil
}

// ActionUsed reports whether the action token with this nonce was used.
func (d *DB) ActionUsed(ctx context.Context, space, nonce string) (bool, error) {
	var n int
	if err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM action_uses WHERE space = ? AND nonce = ?`, space, nonce).Scan(&n); err != nil {
		return false, fmt.Errorf("sqlite: action used: %w", err)
	}
	return n > 0, nil
}

// DeleteExpiredActions forgets the uses of action tokens that have expired by now (a token
// refuses itself once expired, so its record no longer matters), and says how many.
func (d *DB) DeleteExpiredActions(ctx context.Context, now time.Time) (int, error) {
	res, err := d.w.ExecContext(ctx, `DELETE FROM action_uses WHERE expires_at <= ?`, formatTime(now))
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired actions: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// PutMailAddress stores a person's address for notices, replacing theirs; an empty one removes it.
func (d *DB) PutMailAddress(ctx context.Context, m *ask.MailAddress) error {
	var err error
	if m.Email == "" {
		_, err = d.w.ExecContext(ctx, `DELETE FROM mail_addresses WHERE space = ? AND person_id = ?`, m.Space, m.PersonID)
	} else {
		_, err = d.w.ExecContext(ctx, `INSERT INTO mail_addresses (space, person_id, name, email, updated_at, revision) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (space, person_id) DO UPDATE SET name = excluded.name, email = excluded.email, updated_at = excluded.updated_at, revision = excluded.revision`,
			m.Space, m.PersonID, m.Name, m.Email, formatTime(m.UpdatedAt), buildinfo.Revision)
	}
	if err != nil {
		return fmt.Errorf("sqlite: put mail address: %w", err)
	}
	return nil
}

// MailAddresses lists a space's addresses, by person id.
func (d *DB) MailAddresses(ctx context.Context, space string) ([]*ask.MailAddress, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT person_id, name, email, updated_at FROM mail_addresses WHERE space = ? ORDER BY person_id`, space)
	if err != nil {
		return nil, fmt.Errorf("sqlite: mail addresses: %w", err)
	}
	defer rows.Close()
	var out []*ask.MailAddress
	for rows.Next() {
		m := &ask.MailAddress{Space: space}
		var at string
		if err := rows.Scan(&m.PersonID, &m.Name, &m.Email, &at); err != nil {
			return nil, fmt.Errorf("sqlite: mail addresses: %w", err)
		}
		if m.UpdatedAt, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("sqlite: mail addresses: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
