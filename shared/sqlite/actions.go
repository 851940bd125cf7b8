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
