package httpapi

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/loopback-hq/loopback/shared/ask"
)

// The event socket's WebSocket handshake, which the local socket and API Gateway's $connect
// (shared/wsapi) read alike.

// Subprotocols of the event socket. A client offers Subprotocol, and, when it cannot send headers
// (a browser), TicketPrefix+<ticket> beside it. The server only ever selects Subprotocol.
const (
	Subprotocol  = "loopback.v1"
	TicketPrefix = "loopback.ticket."
)

// checkHandshake refuses, with a Problem, a request that is not a WebSocket handshake the socket
// can accept.
func checkHandshake(w http.ResponseWriter, r *http.Request) error {
	if !HeaderHasToken(r.Header, "Connection", "upgrade") || !HeaderHasToken(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Upgrade", "websocket")
		return ask.Errorf(ask.ERequestInvalid, "this is the event socket: open it as a WebSocket with the subprotocol %s", Subprotocol)
	}
	if r.Header.Get("Sec-WebSocket-Version") != "13" {
		w.Header().Set("Sec-WebSocket-Version", "13")
		return ask.Errorf(ask.ERequestInvalid, "the event socket speaks WebSocket version 13 only")
	}
	if keys := r.Header.Values("Sec-WebSocket-Key"); len(keys) != 1 {
		return ask.Errorf(ask.ERequestInvalid, "a WebSocket handshake needs exactly one Sec-WebSocket-Key")
	} else if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return ask.Errorf(ask.ERequestInvalid, "Sec-WebSocket-Key must be 16 bytes in base64")
	}
	if !HeaderHasToken(r.Header, "Sec-WebSocket-Protocol", Subprotocol) {
		return ask.Errorf(ask.ERequestInvalid, "offer the subprotocol %s", Subprotocol)
	}
	return nil
}

// HeaderTokens splits a comma-separated header, over all of its lines.
func HeaderTokens(h http.Header, key string) []string {
	var tokens []string
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tokens = append(tokens, t)
			}
		}
	}
	return tokens
}

// HeaderHasToken reports whether a comma-separated header holds token, in any case.
func HeaderHasToken(h http.Header, key, token string) bool {
	for _, t := range HeaderTokens(h, key) {
		if strings.EqualFold(t, token) {
			return true
		}
	}
	return false
}
