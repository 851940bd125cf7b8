package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/redact"
)

// statusByCode is the one place error codes become HTTP statuses.
var statusByCode = map[string]int{
	ask.ENotFound:         http.StatusNotFound,
	ask.ERouteNotFound:    http.StatusNotFound,
	ask.ESessionNotFound:  http.StatusNotFound,
	ask.EClosed:           http.StatusConflict,
	ask.EAgentsTurn:       http.StatusConflict,
	ask.EHumansTurn:       http.StatusConflict,
	ask.EConflict:         http.StatusConflict,
	ask.EReload:           http.StatusConflict,
	ask.EReplyInvalid:     http.StatusUnprocessableEntity,
	ask.EInputInvalid:     http.StatusUnprocessableEntity,
	ask.EPushInvalid:      http.StatusUnprocessableEntity,
	ask.EAnswerInvalid:    http.StatusUnprocessableEntity,
	ask.EUnauthorized:     http.StatusUnauthorized,
	ask.EForbidden:        http.StatusForbidden,
	EOriginForbidden:      http.StatusForbidden,
	ask.ERequestInvalid:   http.StatusBadRequest,
	ask.ETooLarge:         http.StatusRequestEntityTooLarge,
	ask.EUploadNotFound:   http.StatusNotFound,
	ask.EUploadGone:       http.StatusGone,
	ask.EUploadTooLarge:   http.StatusRequestEntityTooLarge,
	ask.EUploadInvalid:    http.StatusUnprocessableEntity,
	ask.EMethodNotAllowed: http.StatusMethodNotAllowed,
	ask.EMediaType:        http.StatusUnsupportedMediaType,
	ask.ETooMany:          http.StatusTooManyRequests,
	ask.EInternal:         http.StatusInternalServerError,
}

// StatusOf is the HTTP status for an error code; an unknown code is our fault.
func StatusOf(code string) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Problem is the contract's error body.
type Problem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// WriteError is writeError for the other transports on the same port (MCP): one place turns
// errors into HTTP statuses and Problem bodies.
func WriteError(w http.ResponseWriter, r *http.Request, err error) { writeError(w, r, err) }

// writeError answers with the contract's Problem. Internal errors are logged with their detail and
// answered with a generic message.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := ask.ErrorCode(err)
	status := StatusOf(code)
	if status == http.StatusInternalServerError {
		slog.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", redact.String(r.URL.Path), "err", err)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="loopback"`)
	}
	writeJSON(w, status, Problem{Code: code, Message: ask.ErrorMessage(err)})
}

// writeJSON answers with a JSON body. Responses are per-person and change constantly: never cached.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		slog.Error("encoding a response", "err", err)
		status = http.StatusInternalServerError
		body = []byte(`{"code":"internal","message":"Something went wrong on our side. It has been logged."}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(body)
}
