package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// CreateRule stores a new rule unless its space holds max already (ask.RulesFull): the count and
// the insert in one write transaction, so two rules made at once cannot both take the last place.
func (d *DB) CreateRule(ctx context.Context, r *ask.Rule, max int) error {
	return d.writeTx(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM rules WHERE space = ?`, r.Space).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: count rules: %w", err)
		}
		if n >= max {
			return ask.RulesFull(max)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO rules
			(space, id, effect, tool, command_prefix, path_pattern, domain, project, agent,
			 created_by_id, created_by_name, created_at, updated_at, matches, last_matched_at, revision)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.Space, r.ID, r.Effect, r.Tool, r.CommandPrefix, r.PathPattern, r.Domain, r.Project, r.Agent,
			r.CreatedBy.ID, r.CreatedBy.Name, formatTime(r.CreatedAt), formatTime(r.UpdatedAt), r.Matches,
			nullTime(r.LastMatchedAt), buildinfo.Revision)
		if isUnique(err) {
			return fmt.Errorf("sqlite: rule %s: %w", r.ID, ask.ErrAlreadyStored)
		}
		if err != nil {
			return fmt.Errorf("sqlite: create rule %s: %w", r.ID, err)
		}
		return nil
	})
}

// Rules lists a space's rules, newest first.
func (d *DB) Rules(ctx context.Context, space string) ([]*ask.Rule, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT space, id, effect, tool, command_prefix, path_pattern, domain, project, agent,
			created_by_id, created_by_name, created_at, updated_at, matches, last_matched_at
		FROM rules WHERE space = ? ORDER BY created_at DESC, id DESC`, space)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list rules: %w", err)
	}
	defer rows.Close()
	out := []*ask.Rule{}
	for rows.Next() {
		r := &ask.Rule{}
		var created, updated string
		var last sql.NullString
		if err := rows.Scan(&r.Space, &r.ID, &r.Effect, &r.Tool, &r.CommandPrefix, &r.PathPattern, &r.Domain,
			&r.Project, &r.Agent, &r.CreatedBy.ID, &r.CreatedBy.Name, &created, &updated, &r.Matches, &last); err != nil {
			return nil, fmt.Errorf("sqlite: list rules: %w", err)
		}
		if r.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("sqlite: list rules: %w", err)
		}
		if r.UpdatedAt, err = parseTime(updated); err != nil {
			return nil, fmt.Errorf("sqlite: list rules: %w", err)
		}
		if last.Valid {
			t, err := parseTime(last.String)
			if err != nil {
				return nil, fmt.Errorf("sqlite: list rules: %w", err)
			}
			r.LastMatchedAt = &t
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// UpdateRule replaces a rule's effect, scope, maker and update time, and reads back what it
// keeps (its creation time, matches and last match) into r; ask.ErrNotFound when it is gone.
func (d *DB) UpdateRule(ctx context.Context, r *ask.Rule) error {
	return d.writeTx(ctx, func(tx *Tx) error {
		var created string
		var last sql.NullString
		err := tx.QueryRowContext(ctx, `UPDATE rules SET effect = ?, tool = ?, command_prefix = ?, path_pattern = ?,
				domain = ?, project = ?, agent = ?, created_by_id = ?, created_by_name = ?, updated_at = ?, revision = ?
			WHERE space = ? AND id = ? RETURNING created_at, matches, last_matched_at`,
			r.Effect, r.Tool, r.CommandPrefix, r.PathPattern, r.Domain, r.Project, r.Agent,
			r.CreatedBy.ID, r.CreatedBy.Name, formatTime(r.UpdatedAt), buildinfo.Revision, r.Space, r.ID).
			Scan(&created, &r.Matches, &last)
		if err == sql.ErrNoRows {
			return ask.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("sqlite: update rule %s: %w", r.ID, err)
		}
		if r.CreatedAt, err = parseTime(created); err != nil {
			return err
		}
		r.LastMatchedAt = nil
		if last.Valid {
			t, err := parseTime(last.String)
			if err != nil {
				return err
			}
			r.LastMatchedAt = &t
		}
		return nil
	})
}

// DeleteRule removes a rule; ask.ErrNotFound when the space holds none of that id.
func (d *DB) DeleteRule(ctx context.Context, space, id string) error {
	res, err := d.w.ExecContext(ctx, `DELETE FROM rules WHERE space = ? AND id = ?`, space, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete rule %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: delete rule %s: %w", id, err)
	} else if n == 0 {
		return ask.ErrNotFound
	}
	return nil
}

// CountRuleMatch adds one to a rule's matches, and moves its last match forward to at.
func (d *DB) CountRuleMatch(ctx context.Context, space, id string, at time.Time) error {
	res, err := d.w.ExecContext(ctx, `UPDATE rules SET matches = matches + 1,
			last_matched_at = CASE WHEN last_matched_at IS NULL OR last_matched_at < ?1 THEN ?1 ELSE last_matched_at END
		WHERE space = ?2 AND id = ?3`, formatTime(at), space, id)
	if err != nil {
		return fmt.Errorf("sqlite: count a match of rule %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: count a match of rule %s: %w", id, err)
	} else if n == 0 {
		return ask.ErrNotFound
	}
	return nil
}
