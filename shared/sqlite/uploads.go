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

const uploadColumns = `space, id, token_hash, content_type, max_bytes, state, size, created_at, expires_at, stored_at, refusal, credential, used`

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
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.Space, u.ID, u.TokenHash, u.ContentType, u.MaxBytes, string(state), u.Size,
		formatTime(u.CreatedAt), formatTime(u.ExpiresAt), nullTime(u.StoredAt), u.Refusal, u.Credential, u.Used, buildinfo.Revision)
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

// TakeUploadQuota counts one more ticket in the credential's window, in one conditional upsert,
// and forgets the credential's earlier windows.
func (d *DB) TakeUploadQuota(ctx context.Context, space, credential string, window time.Time, max int) error {
	if max < 1 {
		return ask.UploadQuotaSpent(max, window)
	}
	res, err := d.w.ExecContext(ctx, `INSERT INTO upload_quota (space, credential, window, n) VALUES (?, ?, ?, 1)
		ON CONFLICT (space, credential, window) DO UPDATE SET n = n + 1 WHERE n < ?`,
		space, credential, formatTime(window), max)
	if err != nil {
		return fmt.Errorf("sqlite: take upload quota: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: take upload quota: %w", err)
	} else if n == 0 {
		return ask.UploadQuotaSpent(max, window)
	}
	if _, err := d.w.ExecContext(ctx, `DELETE FROM upload_quota WHERE space = ? AND credential = ? AND window < ?`,
		space, credential, formatTime(window)); err != nil {
		return fmt.Errorf("sqlite: take upload quota: %w", err)
	}
	return nil
}

// UseUpload marks a stored upload used.
func (d *DB) UseUpload(ctx context.Context, space, id string) error {
	res, err := d.w.ExecContext(ctx, `UPDATE uploads SET used = 1, revision = ?
		WHERE space = ? AND id = ? AND state = 'stored'`, buildinfo.Revision, space, id)
	if err != nil {
		return fmt.Errorf("sqlite: use upload: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: use upload: %w", err)
	} else if n == 0 {
		return ask.UploadNotFound()
	}
	return nil
}

// ReapableUploads lists unused uploads whose ticket expired at or before `before` (uploads_reapable).
func (d *DB) ReapableUploads(ctx context.Context, before time.Time, limit int) ([]*ask.Upload, error) {
	if limit < 1 {
		return nil, nil
	}
	rows, err := d.r.QueryContext(ctx, `SELECT `+uploadColumns+` FROM uploads
		WHERE used = 0 AND expires_at <= ? ORDER BY expires_at, space, id LIMIT ?`, formatTime(before), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: reapable uploads: %w", err)
	}
	defer rows.Close()
	var out []*ask.Upload
	for rows.Next() {
		u, err := d.scanUpload(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: reapable uploads: %w", err)
	}
	return out, nil
}

// RetireUpload refuses an unused, expired upload, in one conditional UPDATE.
func (d *DB) RetireUpload(ctx context.Context, space, id string, before time.Time, reason string) (bool, error) {
	if reason == "" {
		return false, errors.New("sqlite: retire upload: no reason")
	}
	res, err := d.w.ExecContext(ctx, `UPDATE uploads SET state = 'refused', stored_at = NULL,
		refusal = CASE WHEN refusal = '' THEN ? ELSE refusal END, revision = ?
		WHERE space = ? AND id = ? AND used = 0 AND expires_at <= ?`,
		reason, buildinfo.Revision, space, id, formatTime(before))
	if err != nil {
		return false, fmt.Errorf("sqlite: retire upload: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlite: retire upload: %w", err)
	}
	return n == 1, nil
}

// DeleteUpload deletes a refused upload's row (its token hash and id go with it).
func (d *DB) DeleteUpload(ctx context.Context, space, id string) error {
	if _, err := d.w.ExecContext(ctx, `DELETE FROM uploads WHERE space = ? AND id = ? AND state = 'refused'`, space, id); err != nil {
		return fmt.Errorf("sqlite: delete upload: %w", err)
	}
	return nil
}

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

func (d *DB) scanUpload(row rowScanner) (*ask.Upload, error) {
	var (
		u                ask.Upload
		state            string
		created, expires string
		stored           sql.NullString
	)
	err := row.Scan(&u.Space, &u.ID, &u.TokenHash, &u.ContentType, &u.MaxBytes, &state, &u.Size, &created, &expires, &stored, &u.Refusal, &u.Credential, &u.Used)
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
