package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// Pairing a device and inviting a teammate (contract revision 6; the rules are gate.Passes's).
// Making a code takes a person's credential; redeeming one takes no credential at all (the code
// is the credential, sent in the body, never in the URL): whatever bearer token comes with it
// is ignored, so an agent's credential can do there exactly what a signed-out browser can.

// PairingCode is the contract's PairingCode: shown once, to the person who made it.
type PairingCode struct {
	ID        string    `json:"id"`
	Code      string    `json:"code"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// PairingStatus is the contract's PairingStatus: what the laptop's dialog polls.
type PairingStatus struct {
	ID        string     `json:"id"`
	Status    string     `json:"status"` // waiting | paired | expired
	ExpiresAt time.Time  `json:"expiresAt"`
	Device    string     `json:"device,omitempty"`
	PairedAt  *time.Time `json:"pairedAt,omitempty"`
}

// SignInGrant is the contract's SignInGrant: the new credential's token, returned once.
type SignInGrant struct {
	Token        string    `json:"token"`
	CredentialID string    `json:"credentialId"`
	Space        string    `json:"space"`
	Actor        ask.Actor `json:"actor"`
}

// Invite is the contract's Invite.
type Invite struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Email        string     `json:"email,omitempty"`
	InvitedBy    ask.Actor  `json:"invitedBy"`
	Status       string     `json:"status"` // pending | joined | revoked | expired
	CreatedAt    time.Time  `json:"createdAt"`
	ExpiresAt    time.Time  `json:"expiresAt"`
	JoinedAt     *time.Time `json:"joinedAt,omitempty"`
	CredentialID string     `json:"credentialId,omitempty"`
	// Code is the invite's secret: only in the answer to its creation.
	Code string `json:"code,omitempty"`
}

// InviteView is the contract's InviteView: what an invite's signed-out page shows.
type InviteView struct {
	Space     string    `json:"space"`
	Name      string    `json:"name"`
	InvitedBy ask.Actor `json:"invitedBy"`
	ExpiresAt time.Time `json:"expiresAt"`
}

type redeemInput struct {
	Code   string `json:"code"`
	Device string `json:"device,omitempty"`
}

type inviteInput struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
}

// decodeStrict reads a JSON body into v: no duplicate keys, no unknown fields, nothing after.
func decodeStrict(w http.ResponseWriter, r *http.Request, v any, shape string) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	if err := ask.NoDuplicateKeys(body); err != nil {
		return ask.Errorf(ask.ERequestInvalid, "%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return ask.Errorf(ask.ERequestInvalid, "%s; the body is %s", jsonMessage(err), shape)
	}
	if dec.More() {
		return ask.Errorf(ask.ERequestInvalid, "the body is one JSON object: %s", shape)
	}
	return nil
}

func pairingStatus(p *ask.Pass, now time.Time) PairingStatus {
	st := PairingStatus{ID: p.ID, Status: "waiting", ExpiresAt: p.ExpiresAt}
	switch {
	case p.UsedAt != nil:
		st.Status, st.Device, st.PairedAt = "paired", p.Device, p.UsedAt
	case p.RevokedAt != nil || ask.Expired(p.ExpiresAt, now):
		st.Status = "expired"
	}
	return st
}

func inviteOf(p *ask.Pass, now time.Time) Invite {
	in := Invite{ID: p.ID, Name: p.Actor.Name, Email: p.Email, InvitedBy: p.By, Status: "pending", CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt}
	switch {
	case p.UsedAt != nil:
		in.Status, in.JoinedAt, in.CredentialID = "joined", p.UsedAt, p.CredentialID
	case p.RevokedAt != nil:
		in.Status = "revoked"
	case ask.Expired(p.ExpiresAt, now):
		in.Status = "expired"
	}
	return in
}

// startPairing: POST /api/v1/pairings.
func (s *Server) startPairing(w http.ResponseWriter, r *http.Request) {
	p, code, err := s.Passes.StartPairing(r.Context(), gate.CredentialFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, PairingCode{ID: p.ID, Code: gate.FormatPairingCode(code), ExpiresAt: p.ExpiresAt})
}

// readPairing: GET /api/v1/pairings/{id}.
func (s *Server) readPairing(w http.ResponseWriter, r *http.Request) {
	p, err := s.Passes.Pairing(r.Context(), gate.CredentialFrom(r.Context()), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, pairingStatus(p, s.now()))
}

// redeem: POST /api/v1/signin/pairing and /api/v1/signin/invite, no bearer gate.
func (s *Server) redeem(kind ask.PassKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in redeemInput
		if err := decodeStrict(w, r, &in, `{"code": "…", "device": "…"}`); err != nil {
			s.writeError(w, r, err)
			return
		}
		token, c, _, err := s.Passes.Redeem(gate.FromRequest(r), kind, in.Code, in.Device)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeJSON(w, r, http.StatusCreated, SignInGrant{Token: token, CredentialID: c.ID, Space: c.Space, Actor: c.Actor})
	}
}

// createInvite: POST /api/v1/invites (the owner's).
func (s *Server) createInvite(w http.ResponseWriter, r *http.Request) {
	var in inviteInput
	if err := decodeStrict(w, r, &in, `{"name": "…", "email": "…"}`); err != nil {
		s.writeError(w, r, err)
		return
	}
	p, code, err := s.Passes.Invite(r.Context(), gate.CredentialFrom(r.Context()), in.Name, in.Email)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := inviteOf(p, s.now())
	out.Code = code
	s.writeJSON(w, r, http.StatusCreated, out)
}

// listInvites: GET /api/v1/invites (the owner's).
func (s *Server) listInvites(w http.ResponseWriter, r *http.Request) {
	list, err := s.Passes.Invites(r.Context(), gate.CredentialFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	items := []Invite{}
	now := s.now()
	for _, p := range list {
		items = append(items, inviteOf(p, now))
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"items": items})
}

// revokeInvite: DELETE /api/v1/invites/{id} (the owner's).
func (s *Server) revokeInvite(w http.ResponseWriter, r *http.Request) {
	if err := s.Passes.RevokeInvite(r.Context(), gate.CredentialFrom(r.Context()), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// lookupInvite: POST /api/v1/signin/invite/lookup, no bearer gate.
func (s *Server) lookupInvite(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Code string `json:"code"`
	}
	if err := decodeStrict(w, r, &in, `{"code": "…"}`); err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.Passes.LookupInvite(gate.FromRequest(r), in.Code)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, InviteView{Space: p.Space, Name: p.Actor.Name, InvitedBy: p.By, ExpiresAt: p.ExpiresAt})
}
