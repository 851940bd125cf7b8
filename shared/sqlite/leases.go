package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// PutLease creates a lease, or renews it: a lease of the same space, ask and holder gets the new
// expiry, whether it is later or earlier than the stored one.
func (d *DB) PutLease(ctx context.Context, l ask.Lease) error {
	_, err := d.w.ExecContext(ctx, `INSERT INTO leases (space, ask_id, holder, expires_at, revision)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (space, ask_id, holder) DO UPDATE SET
			expires_at = excluded.expires_at, revision = excluded.revision`,
		l.Space, l.AskID, l.Holder, formatTime(l.ExpiresAt), buildinfo.Revision)
	if err != nil {
		return fmt.Errorf("sqlite: put lease on %s: %w", l.AskID, err)
	}
	return nil
}

// DeleteLease removes a lease; removing one that is gone is not an error.
func (d *DB) DeleteLease(ctx context.Context, space, askID, holder string) error {
	_, err := d.w.ExecContext(ctx, `DELETE FROM leases WHERE space = ? AND ask_id = ? AND holder = ?`,
		space, askID, holder)
	if err != nil {
		return fmt.Errorf("sqlite: delete lease on %s: %w", askID, err)
	}
	return nil
}

// LiveLeases counts the leases on an ask that expire after now.
func (d *DB) LiveLeases(ctx context.Context, space, askID string, now time.Time) (int, error) {
	var n int
	err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM leases
		WHERE space = ? AND ask_id = ? AND expires_at > ?`, space, askID, formatTime(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: count leases on %s: %w", askID, err)
	}
	return n, nil
}

// ExpiredLeases returns up to limit leases of any space that expired at or before now, oldest
// first (leases expiring together in order of space, ask and holder).
func (d *DB) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]ask.Lease, error) {
	if limit < 1 {
		return nil, nil
	}
	rows, err := d.r.QueryContext(ctx, `SELECT space, ask_id, holder, expires_at FROM leases
		WHERE expires_at <= ?
		ORDER BY expires_at, space, ask_id, holder
		LIMIT ?`, formatTime(now), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: expired leases: %w", err)
	}
	defer rows.Close()
	var out []ask.Lease
	for rows.Next() {
		var l ask.Lease
		var expires string
		if err := rows.Scan(&l.Space, &l.AskID, &l.Holder, &expires); err != nil {
			return nil, fmt.Errorf("sqlite: expired leases: %w", err)
		}
		if l.ExpiresAt, err = parseTime(expires); err != nil {
			return nil, fmt.Errorf("sqlite: expired leases: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: expired leases: %w", err)
	}
	return out, nil
}
