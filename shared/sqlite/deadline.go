package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// DueAsks returns up to limit asks of any space due at or before until, soonest first
// (ask.Store.DueAsks), from the due_at index (011).
func (d *DB) DueAsks(ctx context.Context, until time.Time, limit int) ([]ask.DueAsk, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT space, id, due_at FROM asks
		WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at, space, id LIMIT ?`, formatTime(until), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: due asks: %w", err)
	}
	defer rows.Close()
	var out []ask.DueAsk
	for rows.Next() {
		var due ask.DueAsk
		var at string
		if err := rows.Scan(&due.Space, &due.ID, &at); err != nil {
			return nil, fmt.Errorf("sqlite: due asks: %w", err)
		}
		if due.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("sqlite: due asks: %w", err)
		}
		out = append(out, due)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: due asks: %w", err)
	}
	return out, nil
}

// Escalation returns a space's escalation, the zero one when none was set (ask.SettingsStore).
func (d *DB) Escalation(ctx context.Context, space string) (ask.Escalation, error) {
	var e ask.Escalation
	var toPeople int
	var at, byID, byName string
	err := d.r.QueryRowContext(ctx, `SELECT after_minutes, to_people, slack_channel, updated_at, updated_by_id, updated_by_name
		FROM escalations WHERE space = ?`, space).Scan(&e.AfterMinutes, &toPeople, &e.SlackChannel, &at, &byID, &byName)
	if errors.Is(err, sql.ErrNoRows) {
		return ask.Escalation{}, nil
	} else if err != nil {
		return ask.Escalation{}, fmt.Errorf("sqlite: escalation: %w", err)
	}
	e.ToPeople = toPeople != 0
	t, err := parseTime(at)
	if err != nil {
		return ask.Escalation{}, fmt.Errorf("sqlite: escalation: %w", err)
	}
	e.UpdatedAt = &t
	if byID != "" {
		e.UpdatedBy = &ask.Actor{ID: byID, Name: byName}
	}
	return e, nil
}

// PutEscalation sets a space's escalation (ask.SettingsStore).
func (d *DB) PutEscalation(ctx context.Context, space string, e ask.Escalation) error {
	at := time.Time{}
	if e.UpdatedAt != nil {
		at = *e.UpdatedAt
	}
	var by ask.Actor
	if e.UpdatedBy != nil {
		by = *e.UpdatedBy
	}
	toPeople := 0
	if e.ToPeople {
		toPeople = 1
	}
	_, err := d.w.ExecContext(ctx, `INSERT INTO escalations
		(space, after_minutes, to_people, slack_channel, updated_at, updated_by_id, updated_by_name) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (space) DO UPDATE SET after_minutes = excluded.after_minutes, to_people = excluded.to_people,
			slack_channel = excluded.slack_channel, updated_at = excluded.updated_at,
			updated_by_id = excluded.updated_by_id, updated_by_name = excluded.updated_by_name`,
		space, e.AfterMinutes, toPeople, e.SlackChannel, formatTime(at), by.ID, by.Name)
	if err != nil {
		return fmt.Errorf("sqlite: put escalation: %w", err)
	}
	return nil
}
