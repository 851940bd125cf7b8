package events

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Frames a client sends on the event socket, and the server's answers to them (contract revision
// 8): a person's reply sent on the socket the inbox already holds. Decoding and encoding them is
// kept free of any transport, as the server's frames are: the local socket and API Gateway's
// $default route both read them here.
const (
	// TypeReply is a ReplyRequest: a person's reply, as POST /api/v1/asks/{id}/reply takes it.
	TypeReply = "ask.reply"
	// TypeReplied answers a ReplyRequest that was committed: the ask as the reply left it.
	TypeReplied = "ask.replied"
	// TypeRequestFailed answers a frame that was refused, with the Problem HTTP would have given.
	TypeRequestFailed = "request.failed"
)

// MaxClientFrame is the largest frame a client may send: what API Gateway carries (128 KB, taken
// as 128,000 bytes). A larger one ends the socket with 1009; the contract sends such a reply over
// HTTP instead.
const MaxClientFrame = 128_000

// MaxRefChars is the most characters a request's ref may have (the contract's maxLength).
const MaxRefChars = 64

// ReplyRequest is a decoded "ask.reply" frame. Reply is left as sent: the reply's own decoding
// (ask.Reply's) and rules are the HTTP route's, applied where the reply is made.
type ReplyRequest struct {
	Ref   string
	AskID string
	Reply json.RawMessage
}

// DecodeRequest reads a client's frame. A frame it cannot take is an *ask.Error (request.invalid,
// or reply.invalid for a frame with no reply), with the ref when one could be read, so that the
// refusal can name the request it answers.
func DecodeRequest(msg []byte) (ReplyRequest, string, error) {
	var raw struct {
		Type  string          `json:"type"`
		Ref   json.RawMessage `json:"ref"`
		AskID string          `json:"askId"`
		Reply json.RawMessage `json:"reply"`
	}
	if err := json.Unmarshal(msg, &raw); err != nil {
		return ReplyRequest{}, "", ask.Errorf(ask.ERequestInvalid, `a frame on this socket is a JSON object such as {"type":"ask.reply","ref":"1","askId":"…","reply":{…}}`)
	}
	// The ref is echoed on any refusal that comes after it was read: a string of the right length.
	var ref string
	okRef := len(raw.Ref) > 0 && json.Unmarshal(raw.Ref, &ref) == nil
	if n := utf8.RuneCountInString(ref); !okRef || n == 0 || n > MaxRefChars {
		ref, okRef = "", false
	}
	if raw.Type != TypeReply {
		return ReplyRequest{}, ref, ask.Errorf(ask.ERequestInvalid, "a frame of type %s is not one this socket takes: send %q to reply to an ask", strconv.Quote(raw.Type), TypeReply)
	}
	if !okRef {
		return ReplyRequest{}, "", ask.Errorf(ask.ERequestInvalid, "ref is required: a string of 1 to %d characters, echoed on the request's result", MaxRefChars)
	}
	if raw.AskID == "" {
		return ReplyRequest{}, ref, ask.Errorf(ask.ERequestInvalid, "askId is required: the ask replied to")
	}
	if len(raw.Reply) == 0 || bytes.Equal(raw.Reply, []byte("null")) {
		return ReplyRequest{}, ref, ask.Errorf(ask.EReplyInvalid, "reply is required: the reply, as POST /api/v1/asks/{id}/reply takes it")
	}
	return ReplyRequest{Ref: ref, AskID: raw.AskID, Reply: raw.Reply}, ref, nil
}

// EncodeReplied is the "ask.replied" frame answering the request ref, spliced from the replied
// ask's contract JSON (as the store wrote it) without decoding it.
func EncodeReplied(ref string, askJSON []byte) []byte {
	q, _ := json.Marshal(ref) // a string always encodes
	b := make([]byte, 0, len(askJSON)+len(q)+40)
	b = append(b, `{"type":"`+TypeReplied+`","ref":`...)
	b = append(b, q...)
	b = append(b, `,"ask":`...)
	b = append(b, askJSON...)
	return append(b, '}')
}

// EncodeFailed is the "request.failed" frame answering the request ref (left out when "") with
// the HTTP status the same request would have had and its Problem's JSON.
func EncodeFailed(ref string, status int, problem []byte) []byte {
	b := make([]byte, 0, len(problem)+len(ref)+64)
	b = append(b, `{"type":"`+TypeRequestFailed+`"`...)
	if ref != "" {
		q, _ := json.Marshal(ref)
		b = append(b, `,"ref":`...)
		b = append(b, q...)
	}
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"problem":`...)
	b = append(b, problem...)
	return append(b, '}')
}

// WireProblem is the contract's Problem, as a Go client reads it from a "request.failed" frame.
type WireProblem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
