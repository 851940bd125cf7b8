package oauth

import (
	"context"
	"errors"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// The consent page's API (contract revision 5): a signed-in person reads a request to connect
// and approves or refuses it. shared/httpapi serves it; the rules are here and in the gate.

// ConnectRequest is the contract's ConnectRequest: what the consent page shows.
type ConnectRequest struct {
	ID           string        `json:"id"`
	Client       ConnectClient `json:"client"`
	RedirectHost string        `json:"redirectHost"`
	Scope        string        `json:"scope"`
	Resource     string        `json:"resource"`
	MatchCode    string        `json:"matchCode"`
	Status       string        `json:"status"`
	ExpiresAt    time.Time     `json:"expiresAt"`
	CredentialID string        `json:"credentialId,omitempty"`
}

// ConnectClient is the contract's ConnectClient.
type ConnectClient struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// VerifiedHost is the host of the client's metadata document; left out for a registered
	// client, which the page calls unverified.
	VerifiedHost string `json:"verifiedHost,omitempty"`
}

// ConnectDecision is the contract's ConnectDecision.
type ConnectDecision struct {
	Decision string `json:"decision"` // approve | refuse
}

func view(r *ask.AuthRequest) *ConnectRequest {
	status := string(r.Status)
	if r.Status == ask.ConsentUsed {
		status = string(ask.ConsentRefused)
		if r.CredentialID != "" {
			status = string(ask.ConsentApproved)
		}
	}
	return &ConnectRequest{
		ID: r.ID, Client: ConnectClient{ID: r.ClientID, Name: r.ClientName, VerifiedHost: r.ClientHost},
		RedirectHost: redirectHost(r.RedirectURI), Scope: r.Scope, Resource: r.Resource, MatchCode: r.MatchCode,
		Status: status, ExpiresAt: r.ExpiresAt, CredentialID: r.CredentialID,
	}
}

// consentNotFound is one refusal for an unknown request and another space's: a person learns
// nothing of a request decided in a space that is not theirs.
func consentNotFound(id string) error {
	return ask.Errorf(ask.EConsentNotFound, "there is no request to connect %s (it may have expired)", id)
}

// readable finds a request person `by` may see: a pending one (any signed-in person: the code
// on the page is what ties it to the browser that started it), or one decided in their space.
func (s *Server) readable(ctx context.Context, by *ask.Credential, id string) (*ask.AuthRequest, error) {
	if by == nil {
		return nil, ask.Errorf(ask.EUnauthorized, "sign in to the inbox to connect an agent")
	}
	if err := by.ForPerson(); err != nil {
		return nil, err
	}
	r, err := s.cfg.Store.AuthRequestByID(ctx, id)
	if errors.Is(err, ask.ErrNotFound) {
		return nil, consentNotFound(id)
	} else if err != nil {
		return nil, err
	}
	if r.Status != ask.ConsentPending && r.Space != by.Space {
		return nil, consentNotFound(id)
	}
	return r, nil
}

// Consent returns a request to connect as person `by` may see it.
func (s *Server) Consent(ctx context.Context, by *ask.Credential, id string) (*ConnectRequest, error) {
	r, err := s.readable(ctx, by, id)
	if err != nil {
		return nil, err
	}
	if r.Status == ask.ConsentPending && ask.Expired(r.ExpiresAt, s.cfg.Now()) {
		return nil, ask.Errorf(ask.EConsentExpired, "this request to connect expired: start again from the app")
	}
	return view(r), nil
}

// Decide approves or refuses a request to connect, once. Approving makes the agent credential
// the client's tokens will open (gate.Connect): an agent of by's space, owned by by, named
// after the client.
func (s *Server) Decide(ctx context.Context, by *ask.Credential, id string, d ConnectDecision) (*ConnectRequest, error) {
	if d.Decision != "approve" && d.Decision != "refuse" {
		return nil, ask.Errorf(ask.ERequestInvalid, `decision must be "approve" or "refuse"`)
	}
	r, err := s.readable(ctx, by, id)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	if err := decidable(r, now); err != nil {
		return nil, err
	}
	var cred *ask.Credential
	if d.Decision == "approve" {
		// The credential is made before the request changes (the store's write and the change
		// cannot nest); if another decision got there first, it is revoked at once, unused.
		if cred, err = gate.Connect(ctx, s.cfg.Credentials, by, r.ClientID, r.ClientName, now); err != nil {
			return nil, err
		}
	}
	who := by.Actor
	r, err = s.cfg.Store.ChangeAuthRequest(ctx, id, func(x *ask.AuthRequest) error {
		if err := decidable(x, now); err != nil {
			return err
		}
		x.Status, x.Space, x.DecidedBy, x.DecidedAt = ask.ConsentRefused, by.Space, who, &now
		if cred != nil {
			x.Status, x.CredentialID = ask.ConsentApproved, cred.ID
		}
		return nil
	})
	if err != nil {
		if cred != nil {
			if rerr := s.cfg.Credentials.RevokeCredential(ctx, cred.Space, cred.ID, now); rerr != nil {
				s.cfg.Logger.Error("oauth: revoking an unused credential", "credential", cred.ID, "err", rerr)
			}
		}
		return nil, err
	}
	return view(r), nil
}

func decidable(r *ask.AuthRequest, now time.Time) error {
	switch {
	case r.Status != ask.ConsentPending:
		return ask.Errorf(ask.EConsentDecided, "this request to connect was %s already", view(r).Status)
	case ask.Expired(r.ExpiresAt, now):
		return ask.Errorf(ask.EConsentExpired, "this request to connect expired: start again from the app")
	}
	return nil
}

// Disconnected ends what an agent credential's OAuth tokens open, after the credential was
// revoked (ask.Service.Revoke): the gate refuses them already (it reads the credential), and
// this deletes them so that a refresh token is dead in the store too.
func (s *Server) Disconnected(ctx context.Context, space, credentialID string) error {
	return s.deleteTokens(ctx, space, credentialID)
}
