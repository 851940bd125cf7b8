package events

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Frame types: the `type` of the contract's ServerEvent.
const (
	TypeSnapshot   = "snapshot"
	TypeAskOpened  = "ask.opened"
	TypeAskUpdated = "ask.updated"
	// TypeMarkUpdated is a MarkEvent (contract revision 7): one of the person's own marks
	// changed; it goes only to that person's sockets.
	TypeMarkUpdated = "mark.updated"
)

// ServerEvent is one frame on the event socket, as the contract's ServerEvent union: a
// SnapshotEvent (Type "snapshot", Snapshot set) or an AskEvent (Type "ask.opened" or
// "ask.updated", Ask set). Its JSON is exactly the contract's; it does not carry the ask's Space
// or Version, which never leave the server.
//
// The server encodes AskEvents from it (a change comes as a decoded ask); a snapshot frame it
// splices from the asks' stored JSON (EncodeSnapshot), so Encode refuses a snapshot frame, and
// Snapshot is set only on frames a Go client decodes. Building frames is kept free of any
// transport: the local socket sends them, and the AWS stream Lambda (shared/wsapi) builds the
// same frames from asks decoded from DynamoDB stream records.
type ServerEvent struct {
	Type     string
	Snapshot *DecodedSnapshot // Type "snapshot", as decoded
	Ask      *ask.Ask         // Type "ask.opened" or "ask.updated"
	// Since is set on a snapshot that is a delta (contract revision 6): it holds only the asks
	// that changed at or after Since; the client keeps the others it holds.
	Since *time.Time
	// Mark is a MarkEvent's mark (Type "mark.updated", contract revision 7), as the contract's
	// AskMark.
	Mark *WireMark
	// Ref names the client's request an "ask.replied" or "request.failed" frame answers
	// (contract revision 8); Problem is the refusal of a "request.failed" one. Read by Go
	// clients only: the server splices these frames (EncodeReplied, EncodeFailed).
	Ref     string
	Status  int
	Problem *WireProblem
}

// WireMark is the contract's AskMark: a person's own mark on an ask, as GET /api/v1/marks lists
// it and a "mark.updated" frame carries it.
type WireMark struct {
	AskID  string      `json:"askId"`
	ReadAt *string     `json:"readAt,omitempty"`
	Snooze *WireSnooze `json:"snooze,omitempty"`
}

// WireSnooze is the contract's Snooze.
type WireSnooze struct {
	At              string  `json:"at"`
	Until           *string `json:"until,omitempty"`
	UntilAgentMoves bool    `json:"untilAgentMoves,omitempty"`
}

// MarkOf is a mark in its contract shape.
func MarkOf(m ask.Mark) *WireMark {
	out := &WireMark{AskID: m.AskID}
	if m.ReadAt != nil {
		t := ask.FormatTime(*m.ReadAt)
		out.ReadAt = &t
	}
	if sn := m.Snooze; sn != nil {
		out.Snooze = &WireSnooze{At: ask.FormatTime(sn.At), UntilAgentMoves: sn.UntilAgentMoves}
		if sn.Until != nil {
			t := ask.FormatTime(*sn.Until)
			out.Snooze.Until = &t
		}
	}
	return out
}

// MarkFrame is the "mark.updated" frame of a person's changed mark.
func MarkFrame(m ask.Mark) ServerEvent { return ServerEvent{Type: TypeMarkUpdated, Mark: MarkOf(m)} }

// DecodedSnapshot is a snapshot as a Go client reads it (a snapshot frame, or GET
// /api/v1/snapshot): its asks decoded. The server never builds one: it sends ask.Snapshot, the
// asks' contract JSON spliced.
type DecodedSnapshot struct {
	Open   []*ask.Ask `json:"open"`
	Recent []*ask.Ask `json:"recent"`
}

// Frame turns a committed change into its AskEvent: "ask.opened" for a new ask, "ask.updated"
// for every other change (a turn, a close, an agent starting or stopping to follow it).
func Frame(c ask.Change) ServerEvent {
	t := TypeAskUpdated
	if c.Opened {
		t = TypeAskOpened
	}
	return ServerEvent{Type: t, Ask: c.Ask}
}

// EncodeSnapshot is the first frame on a socket, the state a client starts from:
// {"type":"snapshot","snapshot":…}, spliced from the snapshot's asks in their contract JSON
// (ask.Snapshot) without decoding them. A delta (s.Since set, ask.Service.SnapshotSince) adds
// "since" (contract revision 6): the client merges it into what it holds instead of replacing.
func EncodeSnapshot(s *ask.Snapshot) ([]byte, error) {
	snap, err := s.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(snap)+len(`{"type":"snapshot","snapshot":,"since":""}`)+len(ask.TimeLayout))
	b = append(b, `{"type":"snapshot","snapshot":`...)
	b = append(b, snap...)
	if s.Since != nil {
		b = append(b, `,"since":"`...)
		b = append(b, ask.FormatTime(*s.Since)...)
		b = append(b, '"')
	}
	return append(b, '}'), nil
}

// EncodeUpdated is an ask.updated frame's JSON spliced from an ask in its contract JSON, as a
// store lists it (a snapshot's overflow, shared/wsapi): byte for byte Encode(Frame(ask.Change{Ask:
// a})) of the same ask decoded, without decoding it.
func EncodeUpdated(a ask.WireAsk) []byte {
	const head = `{"type":"` + TypeAskUpdated + `","ask":`
	b := make([]byte, 0, len(head)+len(a.JSON)+1)
	b = append(b, head...)
	b = append(b, a.JSON...)
	return append(b, '}')
}

// Encode is the frame's JSON, the bytes a socket sends as one text message.
func Encode(e ServerEvent) ([]byte, error) { return json.Marshal(e) }

// MarshalJSON writes {"type":"ask.…","ask":…}, and refuses a frame whose type and content do
// not match, so a malformed frame never goes out. A snapshot frame is EncodeSnapshot's.
func (e ServerEvent) MarshalJSON() ([]byte, error) {
	switch e.Type {
	case TypeSnapshot:
		return nil, fmt.Errorf("events: a snapshot frame is spliced (EncodeSnapshot), not encoded")
	case TypeAskOpened, TypeAskUpdated:
		if e.Ask == nil || e.Snapshot != nil {
			return nil, fmt.Errorf("events: an %s frame needs an ask and no snapshot", e.Type)
		}
		return json.Marshal(struct {
			Type string   `json:"type"`
			Ask  *ask.Ask `json:"ask"`
		}{e.Type, e.Ask})
	case TypeMarkUpdated:
		if e.Mark == nil || e.Ask != nil || e.Snapshot != nil {
			return nil, fmt.Errorf("events: a %s frame needs a mark and nothing else", e.Type)
		}
		return json.Marshal(struct {
			Type string    `json:"type"`
			Mark *WireMark `json:"mark"`
		}{e.Type, e.Mark})
	}
	return nil, fmt.Errorf("events: unknown frame type %q", e.Type)
}

// UnmarshalJSON reads a frame as the contract writes it, for Go clients of the socket.
func (e *ServerEvent) UnmarshalJSON(data []byte) error {
	var raw struct {
		Type     string           `json:"type"`
		Snapshot *DecodedSnapshot `json:"snapshot"`
		Ask      json.RawMessage  `json:"ask"`
		Since    *string          `json:"since"`
		Mark     *WireMark        `json:"mark"`
		Ref      string           `json:"ref"`
		Problem  *WireProblem     `json:"problem"`
		Status   int              `json:"status"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	v := ServerEvent{Type: raw.Type}
	switch raw.Type {
	case TypeSnapshot:
		if raw.Snapshot == nil || raw.Ask != nil {
			return fmt.Errorf("events: a snapshot frame needs a snapshot and no ask")
		}
		v.Snapshot = raw.Snapshot
		if raw.Since != nil {
			t, err := ask.ParseTime(*raw.Since)
			if err != nil {
				return fmt.Errorf("events: a snapshot's since: %w", err)
			}
			v.Since = &t
		}
	case TypeAskOpened, TypeAskUpdated:
		if raw.Ask == nil || raw.Snapshot != nil {
			return fmt.Errorf("events: an %s frame needs an ask and no snapshot", raw.Type)
		}
		v.Ask = new(ask.Ask)
		if err := json.Unmarshal(raw.Ask, v.Ask); err != nil {
			return err
		}
	case TypeMarkUpdated:
		if raw.Mark == nil || raw.Ask != nil || raw.Snapshot != nil {
			return fmt.Errorf("events: a %s frame needs a mark and nothing else", raw.Type)
		}
		v.Mark = raw.Mark
	case TypeReplied:
		if raw.Ask == nil || raw.Ref == "" {
			return fmt.Errorf("events: an %s frame needs a ref and an ask", raw.Type)
		}
		v.Ref, v.Ask = raw.Ref, new(ask.Ask)
		if err := json.Unmarshal(raw.Ask, v.Ask); err != nil {
			return err
		}
	case TypeRequestFailed:
		if raw.Problem == nil || raw.Ask != nil {
			return fmt.Errorf("events: a %s frame needs a problem and no ask", raw.Type)
		}
		v.Ref, v.Status, v.Problem = raw.Ref, raw.Status, raw.Problem
	default:
		return fmt.Errorf("events: unknown frame type %q", raw.Type)
	}
	*e = v
	return nil
}
