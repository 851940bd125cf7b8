package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// whoami: GET /api/v1/whoami — the space the credentials open, and who holds them.
func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	c := gate.CredentialFrom(r.Context())
	s.writeJSON(w, r, http.StatusOK, ask.Whoami{Space: c.Space, Actor: c.Actor})
}

// snapshot: GET /api/v1/snapshot — every open ask and the fifty most recently closed.
func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) {
	// Spliced from the store's rows: every ask as the contract writes it, never decoded here.
	snap, err := s.Service.Snapshot(r.Context(), gate.CredentialFrom(r.Context()).Space)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeEncoded(w, r, http.StatusOK, snap)
}

// listAsks: GET /api/v1/asks?before=&limit= — closed asks, newest first.
func (s *Server) listAsks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var before *time.Time
	if v := q.Get("before"); v != "" {
		t, err := ask.ParseTime(v)
		if err != nil {
			s.writeError(w, r, ask.Errorf(ask.ERequestInvalid, "before: %v", err))
			return
		}
		before = &t
	}
	limit := ask.DefaultPageLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			s.writeError(w, r, ask.Errorf(ask.ERequestInvalid, "limit must be a whole number between 1 and %d (got %q)", ask.MaxPageLimit, v))
			return
		}
		limit = n
	}
	// Spliced from the store's rows, as the snapshot is: never decoded here.
	page, err := s.Service.History(r.Context(), gate.CredentialFrom(r.Context()).Space, before, limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeEncoded(w, r, http.StatusOK, page)
}

// readAsk: GET /api/v1/asks/{id}.
func (s *Server) readAsk(w http.ResponseWriter, r *http.Request) {
	a, err := s.Service.Find(r.Context(), gate.CredentialFrom(r.Context()).Space, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, a)
}

// reply: POST /api/v1/asks/{id}/reply — decode, then the domain decides 404, 409 or 422.
func (s *Server) reply(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	reply, err := decodeReply(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// Only a person's credential reaches this route, so `by` is always a person.
	c := gate.CredentialFrom(r.Context())
	by := c.Person
	// The response is the JSON the store wrote for the replied ask: encoded once.
	a, err := s.Service.Reply(r.Context(), c.Space, r.PathValue("id"), reply, &by)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeBody(w, http.StatusOK, a.JSON)
}

// decodeReply reads a reply as POST …/reply and a reply sent on the event socket both take it;
// the domain then decides what it may be.
func decodeReply(body []byte) (ask.Reply, error) {
	var reply ask.Reply
	if err := json.Unmarshal(body, &reply); err != nil {
		return reply, ask.Errorf(ask.EReplyInvalid, "%s", jsonMessage(err))
	}
	return reply, nil
}

// dismiss: POST /api/v1/asks/{id}/dismiss (revision 6) — a person closes any open ask, whoever's
// move it is. It takes no body (any sent is not read); the domain decides 404 and 409.
func (s *Server) dismiss(w http.ResponseWriter, r *http.Request) {
	// Only a person's credential reaches this route, so `by` is always a person.
	c := gate.CredentialFrom(r.Context())
	by := c.Person
	a, err := s.Service.DismissVia(r.Context(), c.Space, r.PathValue("id"), &by, ask.SurfaceInbox)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeBody(w, http.StatusOK, a.JSON)
}

// readBody reads a request body up to MaxBodyBytes; beyond it the request is refused with 413
// without reading the rest.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	// The API takes JSON only: a body sent as anything else is refused, not guessed at.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, ask.Errorf(EMediaType, "send the body as JSON, with Content-Type: application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, ask.Errorf(ask.ETooLarge, "the body is over %d bytes", MaxBodyBytes)
	}
	if err != nil {
		return nil, ask.Errorf(ask.ERequestInvalid, "reading the body: %v", err)
	}
	return body, nil
}

// jsonMessage turns a decoding error into a message for the sender.
func jsonMessage(err error) string {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return "the body is not valid JSON: " + syntax.Error()
	}
	return err.Error()
}

// search: GET /api/v1/search?q=&project=&kind=&state=&cursor=&limit= — the space's asks, open
// and closed, by their words and filters, newest first (revision 6). Every refusal of the query
// is a Problem (request.invalid); nothing the query holds reaches a store as syntax.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for name, vs := range q {
		switch name {
		case "q", "project", "kind", "state", "cursor", "limit":
			if len(vs) > 1 {
				s.writeError(w, r, ask.Errorf(ask.ERequestInvalid, "%s: give it once (got %d)", name, len(vs)))
				return
			}
		default:
			s.writeError(w, r, ask.Errorf(ask.ERequestInvalid, "%s: not a parameter of search; it takes q, project, kind, state, cursor and limit", name))
			return
		}
	}
	in := ask.SearchInput{Q: q.Get("q"), Project: q.Get("project"), Kind: q.Get("kind"), State: q.Get("state"), Cursor: q.Get("cursor")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > ask.MaxPageLimit {
			s.writeError(w, r, ask.Errorf(ask.ERequestInvalid, "limit must be a whole number between 1 and %d (got %q)", ask.MaxPageLimit, v))
			return
		}
		in.Limit = n
	}
	page, err := s.Service.Search(r.Context(), gate.CredentialFrom(r.Context()).Space, in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, page)
}

// sendExample: POST /api/v1/examples — a sample question in the person's own space, so the
// empty inbox can show the loop before any agent is connected (revision 6): 201 with the new ask.
func (s *Server) sendExample(w http.ResponseWriter, r *http.Request) {
	a, err := s.Service.SendExample(r.Context(), gate.CredentialFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, a)
}
