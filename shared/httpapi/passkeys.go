package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/passkey"
)

// Passkeys (contract revision 6): a signed-in person registers passkeys and removes them; anyone
// may start a sign-in, and a passkey that verifies gets a new person credential for that browser,
// its token in the answer once. The ceremonies' rules are shared/passkey's.

// PasskeyView is the contract's Passkey.
type PasskeyView struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Person     ask.Actor  `json:"person"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty"`
}

func passkeyView(p *ask.Passkey) PasskeyView {
	return PasskeyView{ID: p.ID, Name: p.Name, Person: p.Person, CreatedAt: p.CreatedAt, LastUsedAt: p.LastUsedAt}
}

// PasskeySignedIn is the contract's PasskeySignIn: the new credential's token, once.
type PasskeySignedIn struct {
	Token        string    `json:"token"`
	CredentialID string    `json:"credentialId"`
	Space        string    `json:"space"`
	Actor        ask.Actor `json:"actor"`
	PasskeyID    string    `json:"passkeyId"`
}

// passkeys is the passkey service for the request's address: the deployment's PublicURL, or on
// AWS the one PasskeyURL names (the host CloudFront was asked for).
func (s *Server) passkeys(r *http.Request) (*passkey.Service, error) {
	u := s.PublicURL
	if s.PasskeyURL != nil {
		u = s.PasskeyURL(r)
	}
	return s.Passkeys.At(u)
}

// beginPasskeyRegistration: POST /api/v1/passkey-registrations {"name": "…"}.
func (s *Server) beginPasskeyRegistration(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var in struct {
		Name string `json:"name"`
	}
	if err := ask.NoDuplicateKeys(body); err != nil {
		s.writeError(w, r, ask.Errorf(ask.EPasskeyInvalid, "%v", err))
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || dec.More() {
		s.writeError(w, r, ask.Errorf(ask.EPasskeyInvalid, `the body is {"name": "…"}: what to call this passkey, such as "MacBook Touch ID"`))
		return
	}
	pk, err := s.passkeys(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	started, err := pk.BeginRegistration(r.Context(), gate.CredentialFrom(r.Context()), in.Name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, started)
}

// readCeremonyResult reads a ceremony's result: the browser's PublicKeyCredential as JSON.
func readCeremonyResult(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := readBody(w, r)
	if err != nil {
		return nil, err
	}
	if len(body) > passkey.MaxBodyBytes {
		return nil, ask.Errorf(ask.ETooLarge, "a passkey's answer is at most %d bytes", passkey.MaxBodyBytes)
	}
	return body, nil
}

// finishPasskeyRegistration: POST /api/v1/passkey-registrations/{id}, the browser's credential.
func (s *Server) finishPasskeyRegistration(w http.ResponseWriter, r *http.Request) {
	body, err := readCeremonyResult(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	pk, err := s.passkeys(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := pk.FinishRegistration(r.Context(), gate.CredentialFrom(r.Context()), r.PathValue("id"), body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, passkeyView(p))
}

// listPasskeys: GET /api/v1/passkeys — the owner sees every passkey of the space, a teammate their own.
func (s *Server) listPasskeys(w http.ResponseWriter, r *http.Request) {
	list, err := s.Passkeys.Visible(r.Context(), gate.CredentialFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	items := make([]PasskeyView, 0, len(list))
	for _, p := range list {
		items = append(items, passkeyView(p))
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"items": items})
}

// removePasskey: DELETE /api/v1/passkeys/{id}. Browsers it signed in stay signed in (each holds
// its own credential, revoked like any other).
func (s *Server) removePasskey(w http.ResponseWriter, r *http.Request) {
	if err := s.Passkeys.Remove(r.Context(), gate.CredentialFrom(r.Context()), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// beginPasskeySignIn: POST /api/v1/passkey-sign-ins — no credential; the body, if any, is ignored.
// An address may start gate.MaxStartsPerMinute a minute.
func (s *Server) beginPasskeySignIn(w http.ResponseWriter, r *http.Request) {
	pk, err := s.passkeys(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// Each start keeps a challenge until it expires: counted per address, 429 past the budget.
	if err := gate.CountStart(gate.FromRequest(r), s.Gate.Starts, "passkey"); err != nil {
		s.writeError(w, r, err)
		return
	}
	started, err := pk.BeginSignIn(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, started)
}

// finishPasskeySignIn: POST /api/v1/passkey-sign-ins/{id}, the browser's assertion. Every
// refusal counts against the client's address in the sign-in throttle.
func (s *Server) finishPasskeySignIn(w http.ResponseWriter, r *http.Request) {
	ctx := gate.FromRequest(r)
	body, err := readCeremonyResult(w, r)
	if err != nil {
		if e, ok := err.(*ask.Error); ok {
			err = s.Gate.Refuse(ctx, e)
		}
		s.writeError(w, r, err)
		return
	}
	pk, err := s.passkeys(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	in, err := pk.FinishSignIn(ctx, r.PathValue("id"), body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.writeJSON(w, r, http.StatusOK, PasskeySignedIn{
		Token: in.Token, CredentialID: in.Credential.ID, Space: in.Credential.Space, Actor: in.Credential.Actor, PasskeyID: in.Passkey.ID,
	})
}
