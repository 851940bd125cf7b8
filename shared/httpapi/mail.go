package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// mailSettings is the contract's MailSettings (revision 4).
type mailSettings struct {
	Email string `json:"email"`
}

// readMailSettings: GET /api/v1/settings/mail — the signed-in person's own address.
func (s *Server) readMailSettings(w http.ResponseWriter, r *http.Request) {
	c := gate.CredentialFrom(r.Context())
	list, err := s.Mail.MailAddresses(r.Context(), c.Space)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := mailSettings{}
	for _, m := range list {
		if m.PersonID == c.Person.ID {
			out.Email = m.Email
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	s.writeJSON(w, r, http.StatusOK, out)
}

// writeMailSettings: PUT /api/v1/settings/mail — the signed-in person's address (a person's
// credential only: the route is personsOnly, so an agent never sets where notices go).
func (s *Server) writeMailSettings(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := ask.NoDuplicateKeys(body); err != nil {
		s.writeError(w, r, ask.Errorf(ask.EMailInvalid, "%v", err))
		return
	}
	var in mailSettings
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		s.writeError(w, r, ask.Errorf(ask.EMailInvalid, "%s", jsonMessage(err)))
		return
	}
	email, err := ask.CheckMailAddress(in.Email)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c := gate.CredentialFrom(r.Context())
	m := &ask.MailAddress{Space: c.Space, PersonID: c.Person.ID, Name: c.Person.Name, Email: email, UpdatedAt: ask.Truncate(s.now())}
	if err := s.Mail.PutMailAddress(r.Context(), m); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.writeJSON(w, r, http.StatusOK, mailSettings{Email: email})
}
