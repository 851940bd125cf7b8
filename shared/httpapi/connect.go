package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/oauth"
)

// Connecting agents (contract revision 5): the consent page reads a request to connect and
// approves or refuses it (the rules are shared/oauth's and the gate's), and the person's
// "Connected agents" lists and revokes agent credentials. Only a person's credential reaches
// these routes.

// readConnect: GET /api/v1/connect/requests/{id}.
func (s *Server) readConnect(w http.ResponseWriter, r *http.Request) {
	v, err := s.Connect.Consent(r.Context(), gate.CredentialFrom(r.Context()), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, v)
}

// decideConnect: POST /api/v1/connect/requests/{id}/decision.
func (s *Server) decideConnect(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var d oauth.ConnectDecision
	if err := ask.NoDuplicateKeys(body); err != nil {
		s.writeError(w, r, ask.Errorf(ask.ERequestInvalid, "%v", err))
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil || dec.More() {
		s.writeError(w, r, ask.Errorf(ask.ERequestInvalid, `the body is {"decision": "approve"} or {"decision": "refuse"}`))
		return
	}
	v, err := s.Connect.Decide(r.Context(), gate.CredentialFrom(r.Context()), r.PathValue("id"), d)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, v)
}

// ConnectedAgent is the contract's ConnectedAgent.
type ConnectedAgent struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Person     ask.Actor  `json:"person"`
	Client     string     `json:"client,omitempty"`
	ClientHost string     `json:"clientHost,omitempty"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty"`
}

// listAgents: GET /api/v1/agents, the live agent credentials this person may revoke.
func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	creds, err := gate.ConnectedAgents(r.Context(), s.Gate.Credentials, gate.CredentialFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	items := []ConnectedAgent{}
	for _, c := range creds {
		if !c.Live() {
			continue
		}
		a := ConnectedAgent{ID: c.ID, Name: c.Actor.Name, Person: c.Person, Client: c.Client, CreatedAt: c.CreatedAt, LastUsedAt: c.LastUsedAt}
		if a.Name == "" {
			a.Name = c.ID
		}
		if oauth.IsDocumentURL(c.Client) {
			if u, err := url.Parse(c.Client); err == nil {
				a.ClientHost = u.Hostname()
			}
		}
		items = append(items, a)
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"items": items})
}

// disconnectAgent: DELETE /api/v1/agents/{id}. Revoking ends what the credential opened, as
// `loopback token revoke` does (ask.Service.Revoke, the Revocations), and its OAuth tokens.
func (s *Server) disconnectAgent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	c, err := gate.CheckDisconnect(ctx, s.Gate.Credentials, gate.CredentialFrom(ctx), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.Service.Revoke(ctx, s.Gate.Credentials, s.TaskStore, c.Space, c.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.Revocations.Revoked(c.Space, c.ID)
	if s.Connect != nil {
		if err := s.Connect.Disconnected(ctx, c.Space, c.ID); err != nil {
			s.errors().Refusal(ctx, err, "disconnecting", c.ID) // logged; the credential is revoked already
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
