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

var _ ask.UploadStore = (*DB)(nil)

const uploadColumns = `space, id, token_hash, content_type, max_bytes, state, size, created_at, expires_at, stored_at, refusal`

// CreateUpload stores a new upload ticket.
func (d *DB) CreateUpload(ctx context.Context, u *ask.Upload) error {
	if len(u.TokenHash) == 0 {
		return errors.New("sqlite: create upload: no token hash")
	}
	state := u.State
	if state == "" {
		state = ask.UploadPending
	}
	_, err := d.w.ExecContext(ctx, `INSERT INTO uploads (`+uploadColumns+`, revision)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.Space, u.ID, u.TokenHash, u.ContentType, u.MaxBytes, string(state), u.Size,
		formatTime(u.CreatedAt), formatTime(u.ExpiresAt), nullTime(u.StoredAt), u.Refusal, buildinfo.Revision)
	if isUnique(err) {
		return fmt.Errorf("sqlite: create upload: upload %s (or its token) is %w (%v)", u.ID, ask.ErrAlreadyStored, err)
	} else if err != nil {
		return fmt.Errorf("sqlite: create upload: %w", err)
	}
	u.State = state
	return nil
}

// UploadByToken finds an upload of a space by the hash of its token.
func (d *DB) UploadByToken(ctx context.Context, space string, tokenHash []byte) (*ask.Upload, error) {
	if len(tokenHash) == 0 {
		return nil, ask.UploadNotFound()
	}
	return d.scanUpload(d.r.QueryRowContext(ctx, `SELECT `+uploadColumns+` FROM uploads
		WHERE token_hash = ? AND space = ?`, tokenHash, space))
}

// ClaimUpload moves a pending, unexpired upload to claimed in one conditional UPDATE.
func (d *DB) ClaimUpload(ctx context.Context, space, id string, now time.Time) (*ask.Upload, error) {
	u, err := d.scanUpload(d.w.QueryRowContext(ctx, `UPDATE uploads SET state = 'claimed', revision = ?
		WHERE space = ? AND id = ? AND state = 'pending' AND expires_at > ?
		RETURNING `+uploadColumns, buildinfo.Revision, space, id, formatTime(now)))
	if ask.ErrorCode(err) != ask.EUploadNotFound {
		return u, err
	}
	// Nothing moved: say why.
	u, err = d.scanUpload(d.w.QueryRowContext(ctx, `SELECT `+uploadColumns+` FROM uploads WHERE space = ? AND id = ?`, space, id))
	if err != nil {
		return nil, err
	}
	return nil, u.ClaimRefusal(now)
}

// ReleaseUpload moves a claimed upload back to pending.
func (d *DB) ReleaseUpload(ctx context.Context, space, id string) error {
	_, err := d.w.ExecContext(ctx, `UPDATE uploads SET state = 'pending', revision = ?
		WHERE space = ? AND id = ? AND state = 'claimed'`, buildinfo.Revision, space, id)
	if err != nil {
		return fmt.Errorf("sqlite: release upload: %w", err)
	}
	return nil
}

// MarkUploadStored moves a claimed upload to stored.
func (d *DB) MarkUploadStored(ctx context.Context, space, id string, size int64, at time.Time) error {
	res, err := d.w.ExecContext(ctx, `UPDATE uploads SET state = 'stored', size = ?, stored_at = ?, revision = ?
		WHERE space = ? AND id = ? AND state = 'claimed'`, size, formatTime(at), buildinfo.Revision, space, id)
	if err != nil {
		return fmt.Errorf("sqlite: mark upload stored: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: mark upload stored: %w", err)
	} else if n == 1 {
		return nil
	}
	if _, err := d.scanUpload(d.w.QueryRowContext(ctx, `SELECT `+uploadColumns+` FROM uploads WHERE space = ? AND id = ?`, space, id)); err != nil {
		return err
	}
	return ask.UploadNotClaimed(id)
}

// StoredUpload returns a stored upload of a space.
func (d *DB) StoredUpload(ctx context.Context, space, id string) (*ask.Upload, error) {
	return d.scanUpload(d.r.QueryRowContext(ctx, `SELECT `+uploadColumns+` FROM uploads
		WHERE space = ? AND id = ? AND state = 'stored'`, space, id))
}

// UploadByID returns an upload of a space, whatever its state.
func (d *DB) UploadByID(ctx context.Context, space, id string) (*ask.Upload, error) {
	return d.scanUpload(d.r.QueryRowContext(ctx, `SELECT `+uploadColumns+` FROM uploads WHERE space = ? AND id = ?`, space, id))
}

// UploadByBlob finds the upload of a blob key: the uploads with its id (uploads_id; one, as ids
// are random), the one whose space hashes to the key's Dir.
func (d *DB) UploadByBlob(ctx context.Context, key ask.BlobKey) (*ask.Upload, error) {
	if key.IsZero() {
		return nil, ask.UploadNotFound()
	}
	rows, err := d.r.QueryContext(ctx, `SELECT space FROM uploads WHERE id = ?`, key.Name())
	if err != nil {
		return nil, fmt.Errorf("sqlite: find upload by blob: %w", err)
	}
	var spaces []string
	for rows.Next() {
		var sp string
		if err := rows.Scan(&sp); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: find upload by blob: %w", err)
		}
		spaces = append(spaces, sp)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: find upload by blob: %w", err)
	}
	for _, sp := range spaces {
		if k, err := ask.UploadBlobKey(sp, key.Name()); err == nil && k == key {
			return d.UploadByID(ctx, sp, key.Name())
		}
	}
	return nil, ask.UploadNotFound()
}

// RefuseUpload moves a pending or claimed upload to refused, with the reason.
func (d *DB) RefuseUpload(ctx context.Context, space, id, reason string) error {
	if reason == "" {
		return errors.New("sqlite: refuse upload: no reason")
	}
	res, err := d.w.ExecContext(ctx, `UPDATE uploads SET state = 'refused', refusal = ?, revision = ?
		WHERE space = ? AND id = ? AND state IN ('pending', 'claimed')`, reason, buildinfo.Revision, space, id)
	if err != nil {
		return fmt.Errorf("sqlite: refuse upload: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: refuse upload: %w", err)
	} else if n == 1 {
		return nil
	}
	u, err := d.scanUpload(d.w.QueryRowContext(ctx, `SELECT `+uploadColumns+` FROM uploads WHERE space = ? AND id = ?`, space, id))
	if err != nil {
		return err
	}
	return u.RefuseRefusal()
}

// DeleteStaleUploads deletes the tickets that were never stored and expired at or before `before`,
// and says how many. Stored uploads stay: asks show them.
func (d *DB) DeleteStaleUploads(ctx context.Context, before time.Time) (int, error) {
	res, err := d.w.ExecContext(ctx, `DELETE FROM uploads WHERE state <> 'stored' AND expires_at <= ?`, formatTime(before))
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete stale uploads: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete stale uploads: %w", err)
	}
	return int(n), nil
}

func (d *DB) scanUpload(row *sql.Row) (*ask.Upload, error) {
	var (
		u                ask.Upload
		state            string
		created, expires string
		stored           sql.NullString
	)
	err := row.Scan(&u.Space, &u.ID, &u.TokenHash, &u.ContentType, &u.MaxBytes, &state, &u.Size, &created, &expires, &stored, &u.Refusal)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.UploadNotFound()
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: read upload: %w", err)
	}
	u.State = ask.UploadState(state)
	if u.CreatedAt, err = parseTime(created); err != nil {
		return nil, fmt.Errorf("sqlite: read upload: %w", err)
	}
	if u.ExpiresAt, err = parseTime(expires); err != nil {
		return nil, fmt.Errorf("sqlite: read upload: %w", err)
	}
	if u.StoredAt, err = parseNullTime(stored); err != nil {
		return nil, fmt.Errorf("sqlite: read upload: %w", err)
	}
	return &u, nil
}
