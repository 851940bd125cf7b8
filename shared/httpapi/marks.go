package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
)

// A person's marks on asks (contract revision 6): read or unread, snoozed or not. Each person's
// own: the routes take a person's credential and read and write only that person's marks.

// wireMark is the contract's AskMark (events.WireMark: the "mark.updated" frame carries the same).
func wireMark(m ask.Mark) *events.WireMark { return events.MarkOf(m) }

// listMarks: GET /api/v1/marks — the caller's marks on the space's open asks.
func (s *Server) listMarks(w http.ResponseWriter, r *http.Request) {
	c := gate.CredentialFrom(r.Context())
	marks, err := s.Service.Marks(r.Context(), c.Space, c.Person.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	items := make([]*events.WireMark, 0, len(marks))
	for _, m := range marks {
		items = append(items, wireMark(m))
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"items": items})
}

// setMark: PUT /api/v1/asks/{id}/mark — change the caller's mark on an ask.
func (s *Server) setMark(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	in, err := decodeMarkInput(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c := gate.CredentialFrom(r.Context())
	m, err := s.Service.SetMark(r.Context(), c.Space, c.Person.ID, r.PathValue("id"), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, wireMark(m))
}

// decodeMarkInput reads an AskMarkInput: a field left out changes nothing; "snooze": null wakes.
func decodeMarkInput(body []byte) (ask.MarkInput, error) {
	var in ask.MarkInput
	if err := ask.NoDuplicateKeys(body); err != nil {
		return in, ask.Errorf(ask.EMarkInvalid, "%v", err)
	}
	var raw struct {
		Read   *bool           `json:"read"`
		Snooze json.RawMessage `json:"snooze"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return in, ask.Errorf(ask.EMarkInvalid, "%s", jsonMessage(err))
	}
	in.Read = raw.Read
	switch {
	case len(raw.Snooze) == 0:
	case string(raw.Snooze) == "null":
		in.ClearSnooze = true
	default:
		var sn struct {
			Until           *string `json:"until"`
			UntilAgentMoves bool    `json:"untilAgentMoves"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw.Snooze))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sn); err != nil {
			return in, ask.Errorf(ask.EMarkInvalid, "snooze: %s", jsonMessage(err))
		}
		in.Snooze = &ask.SnoozeInput{UntilAgentMoves: sn.UntilAgentMoves}
		if sn.Until != nil {
			t, err := ask.ParseTime(*sn.Until)
			if err != nil {
				return in, ask.Errorf(ask.EMarkInvalid, "snooze.until: %v", err)
			}
			in.Snooze.Until = &t
		}
	}
	if in.Read == nil && in.Snooze == nil && !in.ClearSnooze {
		return in, ask.Errorf(ask.EMarkInvalid, "give read, snooze, or both")
	}
	return in, nil
}
