package httpapi

import (
	"net/http"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/sso"
)

// Single sign-on (contract revision 6): whether it is offered, for the signed-out page, and the
// identities linked to persons of the space. The sign-in itself is shared/sso's, beside the API.

// SSOStatus is the contract's SsoStatus.
type SSOStatus struct {
	Enabled  bool   `json:"enabled"`
	Provider string `json:"provider,omitempty"`
	StartURL string `json:"startUrl,omitempty"`
}

// SSOLink is the contract's SsoLink.
type SSOLink struct {
	ID           string     `json:"id"`
	Issuer       string     `json:"issuer"`
	Subject      string     `json:"subject"`
	Email        string     `json:"email,omitempty"`
	Person       ask.Actor  `json:"person"`
	Role         string     `json:"role"`
	CreatedAt    time.Time  `json:"createdAt"`
	LastSignInAt *time.Time `json:"lastSignInAt,omitempty"`
}

// ssoStatus: GET /api/v1/sso, no credential.
func (s *Server) ssoStatus(w http.ResponseWriter, r *http.Request) {
	v := SSOStatus{}
	if s.SSO != nil {
		v = SSOStatus{Enabled: true, Provider: s.SSO.Name(), StartURL: sso.PathStart}
	}
	w.Header().Set("Cache-Control", "no-store")
	s.writeJSON(w, r, http.StatusOK, v)
}

// listSSOLinks: GET /api/v1/sso/links.
func (s *Server) listSSOLinks(w http.ResponseWriter, r *http.Request) {
	links, err := sso.Links(r.Context(), s.SSOLinks, gate.CredentialFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	items := make([]SSOLink, 0, len(links))
	for _, l := range links {
		items = append(items, SSOLink{ID: l.ID, Issuer: l.Issuer, Subject: l.Subject, Email: l.Email, Person: l.Person,
			Role: string(l.Role), CreatedAt: l.CreatedAt, LastSignInAt: l.LastSignInAt})
	}
	s.writeJSON(w, r, http.StatusOK, struct {
		Items []SSOLink `json:"items"`
	}{items})
}

// unlinkSSO: DELETE /api/v1/sso/links/{id}.
func (s *Server) unlinkSSO(w http.ResponseWriter, r *http.Request) {
	if err := sso.Unlink(r.Context(), s.SSOLinks, gate.CredentialFrom(r.Context()), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
