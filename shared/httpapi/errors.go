package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/redact"
)

// statusByCode is the one place error codes become HTTP statuses.
var statusByCode = map[string]int{
	ask.ENotFound:        http.StatusNotFound,
	ERouteNotFound:       http.StatusNotFound,
	ESessionNotFound:     http.StatusNotFound,
	ask.EClosed:          http.StatusConflict,
	ask.EAgentsTurn:      http.StatusConflict,
	ask.EHumansTurn:      http.StatusConflict,
	ask.EConflict:        http.StatusConflict,
	ask.EAskFull:         http.StatusConflict,
	ask.EOpenLimit:       http.StatusConflict,
	EReload:              http.StatusConflict,
	ask.EReplyInvalid:    http.StatusUnprocessableEntity,
	ask.EInputInvalid:    http.StatusUnprocessableEntity,
	ask.EPushInvalid:     http.StatusUnprocessableEntity,
	ask.ERuleInvalid:     http.StatusUnprocessableEntity,
	ask.ESlackInvalid:    http.StatusUnprocessableEntity,
	ask.ESettingsInvalid: http.StatusUnprocessableEntity,
	ask.ERuleLimit:       http.StatusConflict,
	ask.EAnswerInvalid:   http.StatusUnprocessableEntity,
	ask.EUnauthorized:    http.StatusUnauthorized,
	ask.EForbidden:       http.StatusForbidden,
	EOriginForbidden:     http.StatusForbidden,
	ask.ERequestInvalid:  http.StatusBadRequest,
	ask.ETooLarge:        http.StatusRequestEntityTooLarge,
	ask.EUploadNotFound:  http.StatusNotFound,
	ask.EUploadGone:      http.StatusGone,
	ask.EConsentNotFound: http.StatusNotFound,
	ask.EConsentDecided:  http.StatusConflict,
	ask.EConsentExpired:  http.StatusGone,
	ask.EUploadTooLarge:  http.StatusRequestEntityTooLarge,
	ask.EUploadInvalid:   http.StatusUnprocessableEntity,
	EMethodNotAllowed:    http.StatusMethodNotAllowed,
	EMediaType:           http.StatusUnsupportedMediaType,
	ask.ETooMany:         http.StatusTooManyRequests,
	ask.EInternal:        http.StatusInternalServerError,
	ask.EActionInvalid:   http.StatusNotFound,
	ask.EActionExpired:   http.StatusGone,
	ask.EActionUsed:      http.StatusGone,
	ask.EActionRevoked:   http.StatusGone,
	ask.EMailInvalid:     http.StatusUnprocessableEntity,
	ask.EMarkInvalid:     http.StatusUnprocessableEntity,

	// Revision 6: passkeys.
	ask.EPasskeyNotFound: http.StatusNotFound,
	ask.EPasskeyInvalid:  http.StatusUnprocessableEntity,
	ask.EPasskeyExpired:  http.StatusGone,

	// Revision 6: pairing and invites.
	ask.EPassInvalid: http.StatusNotFound,
	ask.EPassExpired: http.StatusGone,
	ask.EPassUsed:    http.StatusGone,
	ask.EPassRevoked: http.StatusGone,

	// Revision 4: push.
	ask.EQuietHoursInvalid: http.StatusUnprocessableEntity,
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

// Refusal is an error as the contract answers it: a status, the headers every Problem carries
// (and WWW-Authenticate on a 401), and the Problem. ProblemFor builds every one there is, so the
// API, MCP, the inbox and API Gateway's $connect answer an error alike.
type Refusal struct {
	Status int
	Header http.Header
	Body   []byte
}

// ProblemFor is err's Refusal. Its status comes from the code (StatusOf); an error that is not an
// *ask.Error is internal, answered with a generic message (the detail is for the log: Errors).
func ProblemFor(err error) Refusal {
	code := ask.ErrorCode(err)
	status := StatusOf(code)
	body, merr := json.Marshal(Problem{Code: code, Message: ask.ErrorMessage(err)})
	if merr != nil { // a string pair always encodes; kept so that a refusal is never empty
		body = []byte(`{"code":"internal","message":"Something went wrong on our side. It has been logged."}`)
	}
	h := http.Header{}
	setJSONHeaders(h)
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="loopback"`)
	}
	var wait interface{ RetryAfter() time.Duration }
	if errors.As(err, &wait) {
		h.Set("Retry-After", strconv.Itoa(int((wait.RetryAfter()+time.Second-1)/time.Second)))
	}
	return Refusal{Status: status, Header: h, Body: body}
}

// setJSONHeaders sets what every JSON response carries, a Problem or not: the contract's
// application/json, never sniffed, and never cached (responses are per-person and change
// constantly).
func setJSONHeaders(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// Write answers with the Refusal: its headers (over any set already), status and Problem.
func (f Refusal) Write(w http.ResponseWriter) {
	h := w.Header()
	for k, vs := range f.Header {
		h[k] = vs
	}
	w.WriteHeader(f.Status)
	w.Write(f.Body)
}

// Errors turns errors into responses: the one place that does, and the one place that logs an
// internal error (a 500), once, with its detail, through Logger (slog.Default when nil). A client
// is never told the detail.
type Errors struct {
	Logger *slog.Logger
}

func (e Errors) logger() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.Default()
}

// Write answers a request with err's Refusal (ProblemFor), logging it first if it is ours.
func (e Errors) Write(w http.ResponseWriter, r *http.Request, err error) {
	e.Refusal(r.Context(), err, "method", r.Method, "path", redact.String(r.URL.Path)).Write(w)
}

// Refusal is err's Refusal for a transport that answers without an http.ResponseWriter (API
// Gateway's $connect), logged as Write logs it; attrs say what was refused.
func (e Errors) Refusal(ctx context.Context, err error, attrs ...any) Refusal {
	f := ProblemFor(err)
	if f.Status == http.StatusInternalServerError {
		e.logger().ErrorContext(ctx, "request failed", append(attrs, "err", err)...)
	}
	return f
}

// TooMany refuses what a credential may not hold more of, with Retry-After.
func (e Errors) TooMany(w http.ResponseWriter, r *http.Request, what string, max int) {
	w.Header().Set("Retry-After", "30")
	e.Write(w, r, ask.Errorf(ask.ETooMany, "this credential has %d %s open already, the most it may; close one, or try again later", max, what))
}

// WriteError is Errors{}.Write, for refusals that are never ours (a 404 or a 405, where no
// logger is at hand); anything that can fail on our side writes through an Errors with its
// logger.
func WriteError(w http.ResponseWriter, r *http.Request, err error) { Errors{}.Write(w, r, err) }

// errors is the Server's Errors, on its Logger.
func (s *Server) errors() Errors { return Errors{Logger: s.Logger} }

// writeError answers with the contract's Problem (Errors.Write).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	s.errors().Write(w, r, err)
}

// writeJSON answers with a JSON body, with the headers every JSON response carries.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.writeError(w, r, err) // not an *ask.Error: logged, and a 500
		return
	}
	writeBody(w, status, body)
}

// writeEncoded answers with v's own encoding, taken as it is: json.Marshal would scan and compact
// what v's MarshalJSON wrote again, which for a snapshot spliced from stored JSON (already
// compact) is most of the work.
func (s *Server) writeEncoded(w http.ResponseWriter, r *http.Request, status int, v json.Marshaler) {
	body, err := v.MarshalJSON()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeBody(w, status, body)
}

func writeBody(w http.ResponseWriter, status int, body []byte) {
	setJSONHeaders(w.Header())
	// Known in advance: the body goes out in one piece rather than as chunks.
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
