package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Action links (contract revision 4): GET /api/v1/actions/{token} says what a signed link would
// do and never acts (mail scanners fetch every link of a mail); POST gives its reply, once. The
// token is the credential (ask.Actions checks it), so neither route takes a bearer token; the
// request log never shows it (redact).

// readAction: GET /api/v1/actions/{token}.
func (s *Server) readAction(w http.ResponseWriter, r *http.Request) {
	v, err := s.Actions.Describe(r.Context(), r.PathValue("token"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	s.writeJSON(w, r, http.StatusOK, v)
}

// actionInput is the contract's ActionInput.
type actionInput struct {
	Choice *int `json:"choice"`
}

// takeAction: POST /api/v1/actions/{token}. The body is JSON (a form a page elsewhere could post
// without asking is refused: readBody takes application/json only).
func (s *Server) takeAction(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := ask.NoDuplicateKeys(body); err != nil {
		s.writeError(w, r, ask.Errorf(ask.EReplyInvalid, "%v", err))
		return
	}
	var in actionInput
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		s.writeError(w, r, ask.Errorf(ask.EReplyInvalid, "%s", jsonMessage(err)))
		return
	}
	choice := 0
	if in.Choice != nil {
		choice = *in.Choice
	}
	v, _, err := s.Actions.Take(r.Context(), r.PathValue("token"), choice)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.writeJSON(w, r, http.StatusOK, v)
}
