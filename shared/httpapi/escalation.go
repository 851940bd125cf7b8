package httpapi

import (
	"net/http"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// readEscalation: GET /api/v1/settings/escalation (revision 4).
func (s *Server) readEscalation(w http.ResponseWriter, r *http.Request) {
	e, err := s.Service.Escalation(r.Context(), gate.CredentialFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.writeJSON(w, r, http.StatusOK, e)
}

// updateEscalation: PUT /api/v1/settings/escalation, a person's EscalationInput.
func (s *Server) updateEscalation(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	in, err := ask.DecodeEscalationInput(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	e, err := s.Service.SetEscalation(r.Context(), gate.CredentialFrom(r.Context()), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, e)
}
