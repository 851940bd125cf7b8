package sqlite

import (
	"context"
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
