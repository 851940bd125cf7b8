package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Slack's links, codes, posted messages and channels (ask.SlackStore; migration 012).

// PutSlackCode implements ask.SlackStore.
func (d *DB) PutSlackCode(ctx context.Context, c *ask.SlackCode) error {
	_, err := d.w.ExecContext(ctx, `INSERT INTO slack_codes (hash, space, person_id, person_name, credential_id, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, c.Hash, c.Space, c.Person.ID, c.Person.Name, c.CredentialID, formatTime(c.ExpiresAt))
	if err != nil {
		return fmt.Errorf("sqlite: put slack code: %w", err)
	}
	return nil
}

// TakeSlackCode implements ask.SlackStore: the code is deleted as it is read, in one statement,
// so two takers never both get it. Expired codes go on the way.
func (d *DB) TakeSlackCode(ctx context.Context, hash []byte, now time.Time) (*ask.SlackCode, error) {
	if _, err := d.w.ExecContext(ctx, `DELETE FROM slack_codes WHERE expires_at < ?`, formatTime(now)); err != nil {
		return nil, fmt.Errorf("sqlite: take slack code: %w", err)
	}
	c := &ask.SlackCode{}
	var expires string
	err := d.w.QueryRowContext(ctx, `DELETE FROM slack_codes WHERE hash = ?
		RETURNING hash, space, person_id, person_name, credential_id, expires_at`, hash).
		Scan(&c.Hash, &c.Space, &c.Person.ID, &c.Person.Name, &c.CredentialID, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.SlackCodeNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: take slack code: %w", err)
	}
	if c.ExpiresAt, err = parseTime(expires); err != nil {
		return nil, fmt.Errorf("sqlite: take slack code: %w", err)
	}
	if !now.Before(c.ExpiresAt) {
		return nil, ask.SlackCodeNotFound()
	}
	return c, nil
}

// PutSlackLink implements ask.SlackStore.
func (d *DB) PutSlackLink(ctx context.Context, l *ask.SlackLink) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: put slack link: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM slack_links WHERE (space = ? AND person_id = ?) OR (team_id = ? AND user_id = ?)`,
		l.Space, l.Person.ID, l.TeamID, l.UserID); err != nil {
		return fmt.Errorf("sqlite: put slack link: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO slack_links
		(space, person_id, person_name, credential_id, team_id, user_id, user_name, linked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		l.Space, l.Person.ID, l.Person.Name, l.CredentialID, l.TeamID, l.UserID, l.UserName, formatTime(l.LinkedAt)); err != nil {
		return fmt.Errorf("sqlite: put slack link: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: put slack link: %w", err)
	}
	return nil
}

const slackLinkColumns = `space, person_id, person_name, credential_id, team_id, user_id, user_name, linked_at`

func scanSlackLink(s interface{ Scan(...any) error }) (*ask.SlackLink, error) {
	l := &ask.SlackLink{}
	var linked string
	if err := s.Scan(&l.Space, &l.Person.ID, &l.Person.Name, &l.CredentialID, &l.TeamID, &l.UserID, &l.UserName, &linked); err != nil {
		return nil, err
	}
	var err error
	l.LinkedAt, err = parseTime(linked)
	return l, err
}

// SlackLinkByUser implements ask.SlackStore.
func (d *DB) SlackLinkByUser(ctx context.Context, team, user string) (*ask.SlackLink, error) {
	l, err := scanSlackLink(d.r.QueryRowContext(ctx, `SELECT `+slackLinkColumns+` FROM slack_links WHERE team_id = ? AND user_id = ?`, team, user))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.SlackLinkNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: slack link: %w", err)
	}
	return l, nil
}

// SlackLinks implements ask.SlackStore.
func (d *DB) SlackLinks(ctx context.Context, space string) ([]*ask.SlackLink, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+slackLinkColumns+` FROM slack_links WHERE space = ? ORDER BY linked_at, person_id`, space)
	if err != nil {
		return nil, fmt.Errorf("sqlite: slack links: %w", err)
	}
	defer rows.Close()
	var out []*ask.SlackLink
	for rows.Next() {
		l, err := scanSlackLink(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: slack links: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// DeleteSlackLink implements ask.SlackStore.
func (d *DB) DeleteSlackLink(ctx context.Context, space, personID string) error {
	res, err := d.w.ExecContext(ctx, `DELETE FROM slack_links WHERE space = ? AND person_id = ?`, space, personID)
	if err != nil {
		return fmt.Errorf("sqlite: delete slack link: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: delete slack link: %w", err)
	} else if n == 0 {
		return ask.SlackLinkNotFound()
	}
	return nil
}

// PutSlackMessage implements ask.SlackStore.
func (d *DB) PutSlackMessage(ctx context.Context, m *ask.SlackMessage) error {
	_, err := d.w.ExecContext(ctx, `INSERT INTO slack_messages (space, ask_id, channel, ts, to_user) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (space, ask_id, channel) DO UPDATE SET ts = excluded.ts, to_user = excluded.to_user`,
		m.Space, m.AskID, m.Channel, m.TS, m.To)
	if err != nil {
		return fmt.Errorf("sqlite: put slack message: %w", err)
	}
	return nil
}

// SlackMessages implements ask.SlackStore.
func (d *DB) SlackMessages(ctx context.Context, space, askID string) ([]*ask.SlackMessage, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT space, ask_id, channel, ts, to_user FROM slack_messages
		WHERE space = ? AND ask_id = ? ORDER BY channel`, space, askID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: slack messages: %w", err)
	}
	defer rows.Close()
	var out []*ask.SlackMessage
	for rows.Next() {
		m := &ask.SlackMessage{}
		if err := rows.Scan(&m.Space, &m.AskID, &m.Channel, &m.TS, &m.To); err != nil {
			return nil, fmt.Errorf("sqlite: slack messages: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// SlackChannel implements ask.SlackStore.
func (d *DB) SlackChannel(ctx context.Context, space string) (string, error) {
	var ch string
	err := d.r.QueryRowContext(ctx, `SELECT channel FROM slack_spaces WHERE space = ?`, space).Scan(&ch)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: slack channel: %w", err)
	}
	return ch, nil
}

// PutSlackChannel implements ask.SlackStore.
func (d *DB) PutSlackChannel(ctx context.Context, space, channel string) error {
	_, err := d.w.ExecContext(ctx, `INSERT INTO slack_spaces (space, channel) VALUES (?, ?)
		ON CONFLICT (space) DO UPDATE SET channel = excluded.channel`, space, channel)
	if err != nil {
		return fmt.Errorf("sqlite: put slack channel: %w", err)
	}
	return nil
}

var _ ask.SlackStore = (*DB)(nil)
