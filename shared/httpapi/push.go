package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// Web Push (contract revision 2): the deployment's key, and the person's devices. Sending is
// shared/push's, from the change hub (local) or the table's stream (AWS).

// PushConfig is what the push routes need; they exist only where it is set.
type PushConfig struct {
	// PublicKey gives the deployment's VAPID public key (on AWS it is read on first use).
	PublicKey func(ctx context.Context) (string, error)
	Store     ask.PushStore
	Rules     ask.PushRules
}

// pushKey: GET /api/v1/push/key.
func (s *Server) pushKey(w http.ResponseWriter, r *http.Request) {
	key, err := s.Push.PublicKey(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, map[string]string{"publicKey": key})
}

// subscribePush: POST /api/v1/push/subscriptions — the browser's PushSubscription, for the person
// whose credential sends it.
func (s *Server) subscribePush(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := ask.NoDuplicateKeys(body); err != nil {
		s.writeError(w, r, ask.Errorf(ask.EPushInvalid, "%v", err))
		return
	}
	var in ask.PushSubscriptionInput
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&in); err != nil {
		s.writeError(w, r, ask.Errorf(ask.EPushInvalid, "%s", jsonMessage(err)))
		return
	}
	c := gate.CredentialFrom(r.Context())
	sub, err := ask.NewPushSubscription(in, c.Space, c, s.Push.Rules, s.now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.Push.Store.PutPushSubscription(r.Context(), sub); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, map[string]string{"id": sub.ID})
}

// unsubscribePush: DELETE /api/v1/push/subscriptions/{id}.
func (s *Server) unsubscribePush(w http.ResponseWriter, r *http.Request) {
	c := gate.CredentialFrom(r.Context())
	if err := s.Push.Store.DeletePushSubscription(r.Context(), c.Space, r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}
