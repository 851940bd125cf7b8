package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// The authorization server's state (ask.OAuthStore), migration 015.

// CreateOAuthClient stores a registered client.
func (d *DB) CreateOAuthClient(ctx context.Context, c *ask.OAuthClient) error {
	uris, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return err
	}
	_, err = d.w.ExecContext(ctx, `INSERT INTO oauth_clients (id, name, redirect_uris, created_at) VALUES (?, ?, ?, ?)`,
		c.ID, c.Name, string(uris), formatTime(c.CreatedAt))
	if isUnique(err) {
		return fmt.Errorf("sqlite: create oauth client %s: %w", c.ID, ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("sqlite: create oauth client %s: %w", c.ID, err)
	}
	return nil
}

// OAuthClientByID returns a registered client, or ask.ErrNotFound.
func (d *DB) OAuthClientByID(ctx context.Context, id string) (*ask.OAuthClient, error) {
	c := &ask.OAuthClient{ID: id}
	var uris, created string
	err := d.r.QueryRowContext(ctx, `SELECT name, redirect_uris, created_at FROM oauth_clients WHERE id = ?`, id).
		Scan(&c.Name, &uris, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: find oauth client %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(uris), &c.RedirectURIs); err != nil {
		return nil, fmt.Errorf("sqlite: oauth client %s: %w", id, err)
	}
	if c.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	return c, nil
}

const authRequestColumns = `id, client_id, client_name, client_host, redirect_uri, state, code_challenge, resource, scope,
	browser_hash, match_code, created_at, expires_at, status, space, credential_id, decided_by_id, decided_by_name,
	decided_at, code_hash, version`

func authRequestArgs(r *ask.AuthRequest) []any {
	var code any
	if len(r.CodeHash) > 0 {
		code = r.CodeHash
	}
	return []any{r.ID, r.ClientID, r.ClientName, r.ClientHost, r.RedirectURI, r.State, r.CodeChallenge, r.Resource, r.Scope,
		r.BrowserHash, r.MatchCode, formatTime(r.CreatedAt), formatTime(r.ExpiresAt), string(r.Status), r.Space,
		r.CredentialID, r.DecidedBy.ID, r.DecidedBy.Name, nullTime(r.DecidedAt), code, r.Version}
}

// CreateAuthRequest stores a new request to connect, at Version 1.
func (d *DB) CreateAuthRequest(ctx context.Context, r *ask.AuthRequest) error {
	r.Version = 1
	_, err := d.w.ExecContext(ctx, `INSERT INTO oauth_requests (`+authRequestColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, authRequestArgs(r)...)
	if isUnique(err) {
		return fmt.Errorf("sqlite: create oauth request %s: %w", r.ID, ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("sqlite: create oauth request %s: %w", r.ID, err)
	}
	return nil
}

// AuthRequestByID returns a request, or ask.ErrNotFound.
func (d *DB) AuthRequestByID(ctx context.Context, id string) (*ask.AuthRequest, error) {
	r, err := scanAuthRequest(d.r.QueryRowContext(ctx, `SELECT `+authRequestColumns+` FROM oauth_requests WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: find oauth request %s: %w", id, err)
	}
	return r, nil
}

// AuthRequestByCode returns the request whose code has this hash, or ask.ErrNotFound.
func (d *DB) AuthRequestByCode(ctx context.Context, codeHash []byte) (*ask.AuthRequest, error) {
	if len(codeHash) == 0 {
		return nil, ask.ErrNotFound
	}
	r, err := scanAuthRequest(d.r.QueryRowContext(ctx, `SELECT `+authRequestColumns+` FROM oauth_requests WHERE code_hash = ?`, codeHash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: find oauth request by code: %w", err)
	}
	return r, nil
}

// ChangeAuthRequest applies fn to a request in one write transaction.
func (d *DB) ChangeAuthRequest(ctx context.Context, id string, fn func(*ask.AuthRequest) error) (*ask.AuthRequest, error) {
	var r *ask.AuthRequest
	var fnErr error
	err := d.writeTx(ctx, func(tx *Tx) error {
		var err error
		r, err = scanAuthRequest(tx.QueryRowContext(ctx, `SELECT `+authRequestColumns+` FROM oauth_requests WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return ask.ErrNotFound
		} else if err != nil {
			return err
		}
		if fnErr = fn(r); fnErr != nil {
			return fnErr
		}
		r.Version++
		args := authRequestArgs(r)
		_, err = tx.ExecContext(ctx, `UPDATE oauth_requests SET expires_at = ?, status = ?, space = ?, credential_id = ?,
			decided_by_id = ?, decided_by_name = ?, decided_at = ?, code_hash = ?, version = ? WHERE id = ?`,
			args[12], args[13], args[14], args[15], args[16], args[17], args[18], args[19], args[20], r.ID)
		return err
	})
	switch {
	case fnErr != nil:
		return r, fnErr
	case errors.Is(err, ask.ErrNotFound):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("sqlite: change oauth request %s: %w", id, err)
	}
	return r, nil
}

func scanAuthRequest(row scanner) (*ask.AuthRequest, error) {
	r := &ask.AuthRequest{}
	var created, expires, status string
	var decided sql.NullString
	err := row.Scan(&r.ID, &r.ClientID, &r.ClientName, &r.ClientHost, &r.RedirectURI, &r.State, &r.CodeChallenge,
		&r.Resource, &r.Scope, &r.BrowserHash, &r.MatchCode, &created, &expires, &status, &r.Space, &r.CredentialID,
		&r.DecidedBy.ID, &r.DecidedBy.Name, &decided, &r.CodeHash, &r.Version)
	if err != nil {
		return nil, err
	}
	r.Status = ask.ConsentStatus(status)
	if r.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if r.ExpiresAt, err = parseTime(expires); err != nil {
		return nil, err
	}
	if r.DecidedAt, err = parseNullTime(decided); err != nil {
		return nil, err
	}
	return r, nil
}

const oauthTokenColumns = `hash, kind, space, credential_id, client_id, resource, scope, created_at, expires_at, rotated_at`

// CreateOAuthToken stores a token.
func (d *DB) CreateOAuthToken(ctx context.Context, t *ask.OAuthToken) error {
	_, err := d.w.ExecContext(ctx, `INSERT INTO oauth_tokens (`+oauthTokenColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.Hash, string(t.Kind), t.Space, t.CredentialID, t.ClientID, t.Resource, t.Scope,
		formatTime(t.CreatedAt), formatTime(t.ExpiresAt), nullTime(t.RotatedAt))
	if isUnique(err) {
		return fmt.Errorf("sqlite: create oauth token: %w", ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("sqlite: create oauth token: %w", err)
	}
	return nil
}

// OAuthTokenByHash returns a token, or ask.ErrNotFound.
func (d *DB) OAuthTokenByHash(ctx context.Context, hash []byte) (*ask.OAuthToken, error) {
	t, err := scanOAuthToken(d.r.QueryRowContext(ctx, `SELECT `+oauthTokenColumns+` FROM oauth_tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: find oauth token: %w", err)
	}
	return t, nil
}

// RotateRefreshToken marks a refresh token rotated unless it was, returning it as it was.
func (d *DB) RotateRefreshToken(ctx context.Context, hash []byte, at time.Time) (*ask.OAuthToken, error) {
	var t *ask.OAuthToken
	err := d.writeTx(ctx, func(tx *Tx) error {
		var err error
		t, err = scanOAuthToken(tx.QueryRowContext(ctx, `SELECT `+oauthTokenColumns+` FROM oauth_tokens WHERE hash = ? AND kind = ?`,
			hash, string(ask.RefreshToken)))
		if errors.Is(err, sql.ErrNoRows) {
			return ask.ErrNotFound
		} else if err != nil {
			return err
		}
		if t.RotatedAt != nil {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE oauth_tokens SET rotated_at = ? WHERE hash = ?`, formatTime(at), hash)
		return err
	})
	if errors.Is(err, ask.ErrNotFound) {
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: rotate refresh token: %w", err)
	}
	return t, nil
}

// DeleteOAuthToken deletes one token.
func (d *DB) DeleteOAuthToken(ctx context.Context, hash []byte) error {
	if _, err := d.w.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE hash = ?`, hash); err != nil {
		return fmt.Errorf("sqlite: delete oauth token: %w", err)
	}
	return nil
}

// DeleteOAuthTokens deletes a credential's tokens of a kind.
func (d *DB) DeleteOAuthTokens(ctx context.Context, space, credentialID string, kind ask.OAuthTokenKind) error {
	_, err := d.w.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE space = ? AND credential_id = ? AND kind = ?`,
		space, credentialID, string(kind))
	if err != nil {
		return fmt.Errorf("sqlite: delete oauth tokens of %s: %w", credentialID, err)
	}
	return nil
}

// ReapOAuth deletes the requests and tokens that expired before now, and the registered clients
// older than ask.OAuthClientIdle of which no request or token is left.
func (d *DB) ReapOAuth(ctx context.Context, now time.Time) error {
	return d.writeTx(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_requests WHERE expires_at < ?`, formatTime(now)); err != nil {
			return fmt.Errorf("sqlite: reap oauth requests: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE expires_at < ?`, formatTime(now)); err != nil {
			return fmt.Errorf("sqlite: reap oauth tokens: %w", err)
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM oauth_clients WHERE created_at < ?
			AND NOT EXISTS (SELECT 1 FROM oauth_requests r WHERE r.client_id = oauth_clients.id)
			AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.client_id = oauth_clients.id)`,
			formatTime(now.Add(-ask.OAuthClientIdle)))
		if err != nil {
			return fmt.Errorf("sqlite: reap oauth clients: %w", err)
		}
		return nil
	})
}

func scanOAuthToken(row scanner) (*ask.OAuthToken, error) {
	t := &ask.OAuthToken{}
	var kind, created, expires string
	var rotated sql.NullString
	err := row.Scan(&t.Hash, &kind, &t.Space, &t.CredentialID, &t.ClientID, &t.Resource, &t.Scope, &created, &expires, &rotated)
	if err != nil {
		return nil, err
	}
	t.Kind = ask.OAuthTokenKind(kind)
	if t.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if t.ExpiresAt, err = parseTime(expires); err != nil {
		return nil, err
	}
	if t.RotatedAt, err = parseNullTime(rotated); err != nil {
		return nil, err
	}
	return t, nil
}
