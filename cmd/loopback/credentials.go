package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/redact"
)

// The local space's standing credentials, both kept across restarts:
//   - the owner's (a person's): the inbox link; LOOPBACK_TOKEN, or DIR/owner.token;
//   - the default agent's: what the printed claude mcp add, Cursor and VS Code lines carry;
//     DIR/agent.token. It can use /mcp and nothing else, so an agent set up as printed can
//     never answer its own asks.
// There is one live owner credential: a new LOOPBACK_TOKEN, or `loopback token rotate`, retires
// the one before it. See docs/trust.md.

// MinTokenLength is the shortest LOOPBACK_TOKEN accepted: a bearer token is the whole of the
// owner's key, and a short one can be guessed.
const MinTokenLength = 32

// Files in the data folder, readable only by this user.
const (
	ownerTokenFile = "owner.token"
	agentTokenFile = "agent.token"
)

// defaultAgent is who the printed agent lines act as.
var defaultAgent = ask.Actor{ID: "agent:default", Name: "agent"}

// ownerCredential returns the owner's token: LOOPBACK_TOKEN when set, else the one kept in the
// data folder, else a new one (kept there). When that token is new (a changed LOOPBACK_TOKEN, a
// first run, a kept token that was revoked), every other live owner credential is retired, so
// that no second key to the inbox is left. A restart with the same token retires nothing: the
// owner's browsers signed in with a passkey (each its own owner credential) stay signed in.
// Only hashes are in the database.
func (a *dataDir) ownerCredential(ctx context.Context) (string, error) {
	template := ask.Credential{Space: LocalSpace, Role: ask.RoleOwner, Actor: a.owner, Person: a.owner}
	var token string
	var cred *ask.Credential
	fresh := false
	if t := strings.TrimSpace(os.Getenv("LOOPBACK_TOKEN")); t != "" {
		// It need not look like a Loopback token (lb_…): every log line masks it all the same.
		redact.Add(t)
		if err := checkChosenToken(t); err != nil {
			return "", err
		}
		_, err := a.db.CredentialByTokenHash(ctx, gate.Hash(t))
		if err != nil && ask.ErrorCode(err) != ask.EUnauthorized {
			return "", err
		}
		fresh = err != nil
		c, err := gate.Adopt(ctx, a.db, t, template)
		if err != nil {
			return "", err
		}
		switch {
		case !c.Live():
			return "", errors.New("LOOPBACK_TOKEN was revoked (by loopback token revoke or rotate): set a new one")
		case c.Role != ask.RoleOwner:
			return "", fmt.Errorf("LOOPBACK_TOKEN is the token of %s (a %s credential), not the owner's: set a token of your own", c.ID, c.Role)
		}
		token, cred = t, c
	} else {
		t, c, made, err := a.keptToken(ctx, ownerTokenFile, ask.RoleOwner, template)
		if err != nil {
			return "", err
		}
		token, cred, fresh = t, c, made
	}
	if !fresh {
		return token, nil
	}
	return token, a.retireOwnersBut(ctx, cred.ID)
}

// agentCredential returns the default agent's token, kept in the data folder; a new one when
// there is none yet or the kept one was revoked.
func (a *dataDir) agentCredential(ctx context.Context) (string, error) {
	t, _, _, err := a.keptToken(ctx, agentTokenFile, ask.RoleAgent,
		ask.Credential{Space: LocalSpace, Role: ask.RoleAgent, Actor: defaultAgent, Person: a.owner})
	return t, err
}

// keptToken returns the live credential of role whose token is kept in the data folder's file,
// or issues a new one from template and keeps its token there (mode 0600); made says which.
func (a *dataDir) keptToken(ctx context.Context, file string, role ask.Role, template ask.Credential) (string, *ask.Credential, bool, error) {
	path := filepath.Join(a.dir, file)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		t := strings.TrimSpace(string(b))
		c, err := a.db.CredentialByTokenHash(ctx, gate.Hash(t))
		if err == nil && c.Live() && c.Role == role {
			return t, c, false, nil
		}
		if err != nil && ask.ErrorCode(err) != ask.EUnauthorized {
			return "", nil, false, err
		}
		// Revoked, or of a database that was replaced: make a new one.
	case !errors.Is(err, os.ErrNotExist):
		return "", nil, false, err
	}
	t, c, err := a.issueKept(ctx, path, template)
	return t, c, true, err
}

// issueKept issues a credential and keeps its token in the file at path, readable only by this
// user. The file is written before anything else can see the new credential in use.
func (a *dataDir) issueKept(ctx context.Context, path string, template ask.Credential) (string, *ask.Credential, error) {
	t, c, err := gate.Issue(ctx, a.db, template)
	if err != nil {
		return "", nil, err
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(t+"\n"), 0o600); err != nil {
		return "", nil, err
	}
	return t, c, os.Rename(tmp, path)
}

// retireOwnersBut revokes every live owner credential of the local space made before keep (the
// owner's printed token): a changed LOOPBACK_TOKEN or a rotation leaves no older key to the
// inbox, and signs out every device paired before it. A device paired since (a credential the
// owner's pairing code minted after keep) stays signed in across restarts.
func (a *dataDir) retireOwnersBut(ctx context.Context, keep string) error {
	creds, err := a.db.Credentials(ctx, LocalSpace)
	if err != nil {
		return err
	}
	var kept *ask.Credential
	for _, c := range creds {
		if c.ID == keep {
			kept = c
		}
	}
	svc := ask.NewService(a.db)
	svc.Leases = a.db
	for _, c := range creds {
		if c.Role == ask.RoleOwner && c.Live() && c.ID != keep && (kept == nil || !c.CreatedAt.After(kept.CreatedAt)) {
			if err := svc.Revoke(ctx, a.db, a.db, LocalSpace, c.ID); err != nil {
				return fmt.Errorf("retiring the previous owner token %s: %w", c.ID, err)
			}
		}
	}
	return nil
}

// rotateOwner issues a new owner token, keeps it in the data folder and retires the old one.
func (a *dataDir) rotateOwner(ctx context.Context) (string, error) {
	if os.Getenv("LOOPBACK_TOKEN") != "" {
		return "", errors.New("LOOPBACK_TOKEN is set, so the owner's token is yours to choose: restart loopback serve with a new LOOPBACK_TOKEN, which retires the old one")
	}
	t, c, err := a.issueKept(ctx, filepath.Join(a.dir, ownerTokenFile),
		ask.Credential{Space: LocalSpace, Role: ask.RoleOwner, Actor: a.owner, Person: a.owner})
	if err != nil {
		return "", err
	}
	return t, a.retireOwnersBut(ctx, c.ID)
}

// MinTokenDistinct is how many different characters LOOPBACK_TOKEN must hold at least: a random
// token of 32 characters holds about 20 (hex: 14 of 16); a made-up one, a word repeated or a row
// of the keyboard, holds few.
const MinTokenDistinct = 10

// checkChosenToken refuses a LOOPBACK_TOKEN that is not a plausible secret: too short to be a key,
// not one line of printable characters without spaces (it travels in an Authorization header
// and a URL fragment), too few different characters, or a shorter string repeated.
func checkChosenToken(t string) error {
	const how = " (make one with: openssl rand -base64 32)"
	if n := utf8.RuneCountInString(t); n < MinTokenLength {
		return fmt.Errorf("LOOPBACK_TOKEN is %d characters; it must be at least %d"+how, n, MinTokenLength)
	}
	distinct := map[rune]bool{}
	for _, r := range t {
		if r <= ' ' || r == 0x7f || r > '~' {
			return errors.New("LOOPBACK_TOKEN may hold only printable ASCII characters, without spaces" + how)
		}
		distinct[r] = true
	}
	if len(distinct) < MinTokenDistinct {
		return fmt.Errorf("LOOPBACK_TOKEN holds only %d different characters; a random secret holds at least %d"+how, len(distinct), MinTokenDistinct)
	}
	for p := 1; p <= len(t)/2; p++ {
		if t[p:] == t[:len(t)-p] {
			return fmt.Errorf("LOOPBACK_TOKEN repeats its first %d characters; a secret is random, not a pattern"+how, p)
		}
	}
	return nil
}
