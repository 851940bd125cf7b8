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

// CreateTicket stores a one-time ticket.
func (d *DB) CreateTicket(ctx context.Context, t *ask.Ticket) error {
	if len(t.Hash) == 0 {
		return errors.New("sqlite: create ticket: no hash")
	}
	_, err := d.w.ExecContext(ctx, `INSERT INTO tickets
		(hash, purpose, space, actor_id, actor_name, credential_id, expires_at, revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		t.Hash, t.Purpose, t.Space, t.Actor.ID, t.Actor.Name, t.CredentialID, formatTime(t.ExpiresAt), buildinfo.Revision)
	if err != nil {
		return fmt.Errorf("sqlite: create ticket: %w", err)
	}
	return nil
}

// ConsumeTicket deletes the ticket with this hash and purpose and returns it, unless it has
// expired by now. One statement finds and deletes it, so of two racing callers only one gets it.
// An expired ticket is deleted all the same.
func (d *DB) ConsumeTicket(ctx context.Context, purpose string, hash []byte, now time.Time) (*ask.Ticket, error) {
	if len(hash) == 0 {
		return nil, ask.TicketNotValid()
	}
	t := &ask.Ticket{Purpose: purpose}
	var expires string
	err := d.w.QueryRowContext(ctx, `DELETE FROM tickets WHERE hash = ? AND purpose = ?
		RETURNING hash, space, actor_id, actor_name, credential_id, expires_at`, hash, purpose).
		Scan(&t.Hash, &t.Space, &t.Actor.ID, &t.Actor.Name, &t.CredentialID, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.TicketNotValid()
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: consume ticket: %w", err)
	}
	if t.ExpiresAt, err = parseTime(expires); err != nil {
		return nil, fmt.Errorf("sqlite: consume ticket: %w", err)
	}
	return ask.CheckTicket(t, now)
}

// DeleteExpiredTickets deletes every ticket that has expired by now (its ExpiresAt is at or before
// now), and says how many. ConsumeTicket deletes the tickets it is shown; this sweeps the ones
// nobody came back for.
func (d *DB) DeleteExpiredTickets(ctx context.Context, now time.Time) (int, error) {
	res, err := d.w.ExecContext(ctx, `DELETE FROM tickets WHERE expires_at <= ?`, formatTime(now))
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired tickets: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired tickets: %w", err)
	}
	return int(n), nil
}
