package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// Rules (contract revision 3): the space's rules that decide approvals without asking. Only a
// person's credential reaches these routes (and the Service checks it again).

// listRules: GET /api/v1/rules.
func (s *Server) listRules(w http.ResponseWriter, r *http.Request) {
	list, err := s.Service.ListRules(r.Context(), gate.CredentialFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.writeJSON(w, r, http.StatusOK, list)
}

// createRule: POST /api/v1/rules.
func (s *Server) createRule(w http.ResponseWriter, r *http.Request) {
	in, err := readRuleInput(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rule, err := s.Service.CreateRule(r.Context(), gate.CredentialFrom(r.Context()), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, rule)
}

// updateRule: PUT /api/v1/rules/{id}.
func (s *Server) updateRule(w http.ResponseWriter, r *http.Request) {
	in, err := readRuleInput(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rule, err := s.Service.UpdateRule(r.Context(), gate.CredentialFrom(r.Context()), r.PathValue("id"), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, rule)
}

// deleteRule: DELETE /api/v1/rules/{id}.
func (s *Server) deleteRule(w http.ResponseWriter, r *http.Request) {
	if err := s.Service.DeleteRule(r.Context(), gate.CredentialFrom(r.Context()), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// readRuleInput decodes a RuleInput strictly: JSON, each key once, no field the contract does
// not name.
func readRuleInput(w http.ResponseWriter, r *http.Request) (ask.RuleInput, error) {
	var in ask.RuleInput
	body, err := readBody(w, r)
	if err != nil {
		return in, err
	}
	if err := ask.NoDuplicateKeys(body); err != nil {
		return in, ask.Errorf(ask.ERuleInvalid, "%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, ask.Errorf(ask.ERuleInvalid, "%s", jsonMessage(err))
	}
	if dec.More() {
		return in, ask.Errorf(ask.ERuleInvalid, "the body holds more than one JSON value")
	}
	return in, nil
}
