package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

var _ ask.MarkStore = (*DB)(nil)

const markColumns = `ask_id, read_at, snoozed_at, snoozed_until, until_agent, updated_at`

// Mark reads a person's mark on an ask (contract revision 6), or ask.ErrNotFound.
func (d *DB) Mark(ctx context.Context, space, person, askID string) (ask.Mark, error) {
	row := d.r.QueryRowContext(ctx, `SELECT `+markColumns+` FROM ask_marks WHERE space = ? AND person_id = ? AND ask_id = ?`, space, person, askID)
	m, err := scanMark(row)
	if errors.Is(err, sql.ErrNoRows) {
		return ask.Mark{}, ask.ErrNotFound
	}
	return m, err
}

// PutMark writes a person's mark on an ask, replacing any.
func (d *DB) PutMark(ctx context.Context, space, person string, m ask.Mark) error {
	var snoozedAt, until sql.NullString
	agent := 0
	if s := m.Snooze; s != nil {
		snoozedAt = nullTime(&s.At)
		until = nullTime(s.Until)
		if s.UntilAgentMoves {
			agent = 1
		}
	}
	_, err := d.w.ExecContext(ctx, `INSERT INTO ask_marks (space, person_id, ask_id, read_at, snoozed_at, snoozed_until, until_agent, updated_at, revision)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (space, person_id, ask_id) DO UPDATE SET read_at = excluded.read_at, snoozed_at = excluded.snoozed_at,
			snoozed_until = excluded.snoozed_until, until_agent = excluded.until_agent, updated_at = excluded.updated_at,
			revision = excluded.revision`,
		space, person, m.AskID, nullTime(m.ReadAt), snoozedAt, until, agent, formatTime(m.UpdatedAt), buildinfo.Revision)
	if err != nil {
		return fmt.Errorf("sqlite: put mark: %w", err)
	}
	return nil
}

// Marks returns every mark a person holds in a space.
func (d *DB) Marks(ctx context.Context, space, person string) ([]ask.Mark, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+markColumns+` FROM ask_marks WHERE space = ? AND person_id = ?`, space, person)
	if err != nil {
		return nil, fmt.Errorf("sqlite: read marks: %w", err)
	}
	defer rows.Close()
	var out []ask.Mark
	for rows.Next() {
		m, err := scanMark(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: read marks: %w", err)
	}
	return out, nil
}

func scanMark(row interface{ Scan(...any) error }) (ask.Mark, error) {
	var m ask.Mark
	var readAt, snoozedAt, until sql.NullString
	var agent int
	var updated string
	if err := row.Scan(&m.AskID, &readAt, &snoozedAt, &until, &agent, &updated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return m, err
		}
		return m, fmt.Errorf("sqlite: read mark: %w", err)
	}
	var err error
	if m.UpdatedAt, err = parseTime(updated); err != nil {
		return m, err
	}
	if m.ReadAt, err = parseNullTime(readAt); err != nil {
		return m, err
	}
	if snoozedAt.Valid {
		s := &ask.Snooze{UntilAgentMoves: agent != 0}
		if s.At, err = parseTime(snoozedAt.String); err != nil {
			return m, err
		}
		if s.Until, err = parseNullTime(until); err != nil {
			return m, err
		}
		m.Snooze = s
	}
	return m, nil
}
