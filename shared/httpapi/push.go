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
	subs, err := s.Push.Store.PushSubscriptions(r.Context(), c.Space)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, old := range subs {
		if old.ID != sub.ID {
			continue
		}
		live := true
		if old.CredentialID != c.ID {
			_, lerr := s.Gate.Live(r.Context(), c.Space, old.CredentialID)
			if lerr != nil && ask.ErrorCode(lerr) != ask.EUnauthorized {
				s.writeError(w, r, lerr)
				return
			}
			live = lerr == nil
		}
		if err := ask.CheckPushReplace(old, c, live); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if err := s.Push.Store.PutPushSubscription(r.Context(), sub); err != nil {
		s.writeError(w, r, err)
		return
	}
	// The person keeps at most ask.MaxPushDevices: the oldest beyond go. Listed after the put,
	// so that subscriptions stored at once still end within the bound.
	// A failure here leaves one device too many until the next subscription: logged, not
	// answered, since this one is stored.
	if subs, err = s.Push.Store.PushSubscriptions(r.Context(), c.Space); err != nil {
		s.errors().logger().ErrorContext(r.Context(), "push: keeping the devices within their bound", "err", err)
	} else {
		for _, old := range ask.PushOverCap(subs, c.Person.ID, sub.ID) {
			if err := s.Push.Store.DeletePushSubscription(r.Context(), c.Space, old.ID); err != nil && ask.ErrorCode(err) != ask.ENotFound {
				s.errors().logger().ErrorContext(r.Context(), "push: keeping the devices within their bound", "err", err)
			}
		}
	}
	s.writeJSON(w, r, http.StatusCreated, map[string]string{"id": sub.ID})
}

// unsubscribePush: DELETE /api/v1/push/subscriptions/{id}.
func (s *Server) unsubscribePush(w http.ResponseWriter, r *http.Request) {
	c := gate.CredentialFrom(r.Context())
	id := r.PathValue("id")
	subs, err := s.Push.Store.PushSubscriptions(r.Context(), c.Space)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, sub := range subs {
		if sub.ID != id {
			continue
		}
		if err := ask.CheckPushDelete(sub, c); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if err := s.Push.Store.DeletePushSubscription(r.Context(), c.Space, id); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// Quiet hours (contract revision 4): each person's own, set from the inbox's Settings page. The
// routes are persons-only, so no agent credential reads or sets them.

// readQuietHours: GET /api/v1/push/quiet-hours.
func (s *Server) readQuietHours(w http.ResponseWriter, r *http.Request) {
	c := gate.CredentialFrom(r.Context())
	q, err := s.Push.Store.QuietHours(r.Context(), c.Space, c.Person.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, q)
}

// setQuietHours: PUT /api/v1/push/quiet-hours.
func (s *Server) setQuietHours(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := ask.NoDuplicateKeys(body); err != nil {
		s.writeError(w, r, ask.Errorf(ask.EQuietHoursInvalid, "%v", err))
		return
	}
	var in ask.QuietHours
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		s.writeError(w, r, ask.Errorf(ask.EQuietHoursInvalid, "%s", jsonMessage(err)))
		return
	}
	q, err := ask.CheckQuietHours(in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c := gate.CredentialFrom(r.Context())
	if err := s.Push.Store.PutQuietHours(r.Context(), c.Space, c.Person.ID, q); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, q)
}

// clearQuietHours: DELETE /api/v1/push/quiet-hours.
func (s *Server) clearQuietHours(w http.ResponseWriter, r *http.Request) {
	c := gate.CredentialFrom(r.Context())
	if err := s.Push.Store.DeleteQuietHours(r.Context(), c.Space, c.Person.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
