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

const taskColumns = `space, id, credential_id, ask_id, tool, status, message, result, ttl_ms, created_at, updated_at, expires_at`

// CreateTask stores a new task as it is given; ExpiresAt is the caller's to set (CreatedAt + TTL).
// An id already stored in the space is refused. TTL is kept to the millisecond.
func (d *DB) CreateTask(ctx context.Context, t *ask.Task) error {
	_, err := d.w.ExecContext(ctx, `INSERT INTO tasks (`+taskColumns+`, revision)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.Space, t.ID, t.CredentialID, t.AskID, t.Tool, t.Status, t.Message, t.Result, t.TTL.Milliseconds(),
		formatTime(t.CreatedAt), formatTime(t.UpdatedAt), formatTime(t.ExpiresAt), buildinfo.Revision)
	if isUnique(err) {
		return fmt.Errorf("sqlite: create task %s: %w in the space (%v)", t.ID, ask.ErrAlreadyStored, err)
	} else if err != nil {
		return fmt.Errorf("sqlite: create task %s: %w", t.ID, err)
	}
	return nil
}

// FindTask returns a task of a space, or ask.ENotFound when there is none or it has expired
// (now is at or after its ExpiresAt).
func (d *DB) FindTask(ctx context.Context, space, id string, now time.Time) (*ask.Task, error) {
	row := d.r.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks
		WHERE space = ? AND id = ? AND expires_at > ?`, space, id, formatTime(now))
	t, err := scanTask(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.TaskNotFound(id)
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: find task %s: %w", id, err)
	}
	return t, nil
}

// FinishTask moves the working task t.Space/t.ID to t.Status, with t.Message, t.Result and
// t.UpdatedAt, and returns the task as stored afterwards. A task already terminal is returned
// unchanged, so the first finish wins. The other fields of t are not written. A task that is not
// stored is ask.ENotFound; expiry is not checked (a task is finished as its wait ends, and no
// clock reading comes with the call). t.Status must be terminal.
func (d *DB) FinishTask(ctx context.Context, t *ask.Task) (*ask.Task, error) {
	if !t.Terminal() {
		return nil, fmt.Errorf("sqlite: finish task %s: status %q is not terminal", t.ID, t.Status)
	}
	var stored *ask.Task
	err := d.writeTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tasks SET status = ?, message = ?, result = ?, updated_at = ?, revision = ?
			WHERE space = ? AND id = ? AND status = 'working'`,
			t.Status, t.Message, t.Result, formatTime(t.UpdatedAt), buildinfo.Revision, t.Space, t.ID)
		if err != nil {
			return err
		}
		stored, err = scanTask(tx.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE space = ? AND id = ?`,
			t.Space, t.ID))
		if errors.Is(err, sql.ErrNoRows) {
			return ask.TaskNotFound(t.ID)
		}
		return err
	})
	var domain *ask.Error
	if errors.As(err, &domain) {
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: finish task %s: %w", t.ID, err)
	}
	return stored, nil
}

// ListTasks returns up to limit of a space's unexpired tasks, newest first (tasks created together
// in descending order of id), after the cursor ("" for the first page), and the cursor of the next
// page: "" when this page holds the last task. The cursor names the last task of the page, so a
// page resumes where the previous one ended even when tasks come, finish or expire in between. A
// cursor this store did not give out is ask.ERequestInvalid.
func (d *DB) ListTasks(ctx context.Context, space, cursor string, limit int, now time.Time) ([]*ask.Task, string, error) {
	if limit < 1 {
		return nil, "", nil
	}
	query := `SELECT ` + taskColumns + ` FROM tasks WHERE space = ? AND expires_at > ?`
	args := []any{space, formatTime(now)}
	if cursor != "" {
		created, id, err := ask.DecodeTaskCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		query += ` AND (created_at, id) < (?, ?)`
		args = append(args, created, id)
	}
	query += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, limit+1)
	rows, err := d.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, "", fmt.Errorf("sqlite: list tasks: %w", err)
	}
	defer rows.Close()
	var out []*ask.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, "", fmt.Errorf("sqlite: list tasks: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("sqlite: list tasks: %w", err)
	}
	if len(out) <= limit {
		return out, "", nil
	}
	out = out[:limit]
	last := out[limit-1]
	return out, ask.EncodeTaskCursor(last.CreatedAt, last.ID), nil
}

// DeleteExpiredTasks deletes every task whose ExpiresAt is at or before now, and says how many.
func (d *DB) DeleteExpiredTasks(ctx context.Context, now time.Time) (int, error) {
	res, err := d.w.ExecContext(ctx, `DELETE FROM tasks WHERE expires_at <= ?`, formatTime(now))
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired tasks: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired tasks: %w", err)
	}
	return int(n), nil
}

func scanTask(row scanner) (*ask.Task, error) {
	t := &ask.Task{}
	var ttl int64
	var created, updated, expires string
	err := row.Scan(&t.Space, &t.ID, &t.CredentialID, &t.AskID, &t.Tool, &t.Status, &t.Message, &t.Result, &ttl,
		&created, &updated, &expires)
	if err != nil {
		return nil, err
	}
	t.TTL = time.Duration(ttl) * time.Millisecond
	if t.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if t.UpdatedAt, err = parseTime(updated); err != nil {
		return nil, err
	}
	if t.ExpiresAt, err = parseTime(expires); err != nil {
		return nil, err
	}
	return t, nil
}
