package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// PutPushSubscription stores a subscription, replacing one with the same id.
func (d *DB) PutPushSubscription(ctx context.Context, s *ask.PushSubscription) error {
	_, err := d.w.ExecContext(ctx, `INSERT INTO push_subscriptions
		(space, id, person_id, credential_id, endpoint, p256dh, auth, created_at, revision)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (space, id) DO UPDATE SET person_id = excluded.person_id, credential_id = excluded.credential_id,
			endpoint = excluded.endpoint, p256dh = excluded.p256dh, auth = excluded.auth,
			created_at = excluded.created_at, revision = excluded.revision`,
		s.Space, s.ID, s.PersonID, s.CredentialID, s.Endpoint, s.P256dh, s.Auth, formatTime(s.CreatedAt), buildinfo.Revision)
	if err != nil {
		return fmt.Errorf("sqlite: put push subscription %s: %w", s.ID, err)
	}
	return nil
}

// PushSubscriptions lists a space's subscriptions, oldest first.
func (d *DB) PushSubscriptions(ctx context.Context, space string) ([]*ask.PushSubscription, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT space, id, person_id, credential_id, endpoint, p256dh, auth, created_at
		FROM push_subscriptions WHERE space = ? ORDER BY created_at, id`, space)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list push subscriptions: %w", err)
	}
	defer rows.Close()
	var out []*ask.PushSubscription
	for rows.Next() {
		s := &ask.PushSubscription{}
		var created string
		if err := rows.Scan(&s.Space, &s.ID, &s.PersonID, &s.CredentialID, &s.Endpoint, &s.P256dh, &s.Auth, &created); err != nil {
			return nil, fmt.Errorf("sqlite: list push subscriptions: %w", err)
		}
		if s.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("sqlite: list push subscriptions: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// DeletePushSubscription removes a subscription, or returns ask.ENotFound.
func (d *DB) DeletePushSubscription(ctx context.Context, space, id string) error {
	res, err := d.w.ExecContext(ctx, `DELETE FROM push_subscriptions WHERE space = ? AND id = ?`, space, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete push subscription %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: delete push subscription %s: %w", id, err)
	} else if n == 0 {
		return ask.PushSubscriptionNotFound(id)
	}
	return nil
}

// QuietHours reads a person's quiet hours, or returns ask.ENotFound.
func (d *DB) QuietHours(ctx context.Context, space, person string) (ask.QuietHours, error) {
	var q ask.QuietHours
	err := d.r.QueryRowContext(ctx, `SELECT start, end, time_zone FROM push_quiet_hours WHERE space = ? AND person_id = ?`,
		space, person).Scan(&q.Start, &q.End, &q.TimeZone)
	if errors.Is(err, sql.ErrNoRows) {
		return q, ask.QuietHoursNotSet()
	} else if err != nil {
		return q, fmt.Errorf("sqlite: read quiet hours: %w", err)
	}
	return q, nil
}

// PutQuietHours sets a person's quiet hours, replacing any.
func (d *DB) PutQuietHours(ctx context.Context, space, person string, q ask.QuietHours) error {
	_, err := d.w.ExecContext(ctx, `INSERT INTO push_quiet_hours (space, person_id, start, end, time_zone, revision)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (space, person_id) DO UPDATE SET start = excluded.start, end = excluded.end,
			time_zone = excluded.time_zone, revision = excluded.revision`,
		space, person, q.Start, q.End, q.TimeZone, buildinfo.Revision)
	if err != nil {
		return fmt.Errorf("sqlite: put quiet hours: %w", err)
	}
	return nil
}

// DeleteQuietHours removes a person's quiet hours, if they have any.
func (d *DB) DeleteQuietHours(ctx context.Context, space, person string) error {
	if _, err := d.w.ExecContext(ctx, `DELETE FROM push_quiet_hours WHERE space = ? AND person_id = ?`, space, person); err != nil {
		return fmt.Errorf("sqlite: delete quiet hours: %w", err)
	}
	return nil
}
