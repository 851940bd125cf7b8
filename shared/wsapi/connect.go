// Package wsapi is the event socket on API Gateway WebSocket: the $connect, $disconnect and
// $default routes, the snapshot every connection starts with, and the fan-out of committed
// changes (read from the DynamoDB stream) to every connection of a space. API Gateway holds the
// sockets; Loopback knows them by id (ask.ConnectionStore) and writes to them through the
// `@connections` management API (Poster).
//
// It keeps the promises of the local socket (shared/httpapi/socket.go, docs/design/events.md):
// the same handshake and refusals, the snapshot first, then every newer change of the space. How
// that is kept without a process holding each socket is docs/design/events.md, "On AWS".
package wsapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// ConnectionTTL is how long a connection is kept (ask.Connection's ExpiresAt): API Gateway ends
// every WebSocket after two hours, and a $disconnect that never came must not keep it listed for
// ever.
const ConnectionTTL = 2*time.Hour + 10*time.Minute

// ErrGone is what a Poster returns when API Gateway answers 410: the connection is gone (or, in
// the first moments after $connect, not open yet).
var ErrGone = errors.New("wsapi: the connection is gone")

// ErrTooLarge is what a Poster returns when API Gateway refuses a message as too large.
var ErrTooLarge = errors.New("wsapi: the message is too large for API Gateway")

// Poster writes to connections that API Gateway holds: the `@connections` management API.
type Poster interface {
	// Post sends one message (a frame) to a connection. 410 Gone is ErrGone.
	Post(ctx context.Context, connectionID string, data []byte) error
	// Close disconnects a connection. One that is gone already is not an error.
	Close(ctx context.Context, connectionID string) error
}

// Sockets serves the event socket's routes and delivers frames. Service, Gate, Conns and Poster
// are required; Tickets too, for browsers.
type Sockets struct {
	Service *ask.Service
	Gate    *gate.Gate
	Tickets ask.TicketStore
	Conns   ask.ConnectionStore
	Poster  Poster
	Logger  *slog.Logger

	// PublicURL is where people reach this deployment, such as https://d111.cloudfront.net: a
	// browser's Origin must be its scheme and host. When empty, the deployment's address is taken
	// from the X-Loopback-Host header CloudFront's viewer function sets (docs/deploy.md).
	PublicURL string

	// MaxFrame is the largest message posted: API Gateway refuses more than 128 KB.
	MaxFrame int
	// PostTimeout bounds each post, so one slow call cannot hold up the rest. Default 5 s.
	PostTimeout time.Duration
	// Concurrency bounds the posts of one change in flight at once. Default 16.
	Concurrency int
	// Notify, when set, hears of each ask's change after it has been fanned out: the fan-out
	// pushes to the person's devices through it (shared/push). It must not fail the record.
	Notify func(ctx context.Context, ch ask.Change)

	// OpenGrace is how long after $connect a 410 is taken to mean "not open yet" rather than
	// "gone", and the snapshot's post is retried. Default 5 s.
	OpenGrace time.Duration
}

// DefaultMaxFrame is API Gateway's limit on a WebSocket message, 128 KB, taken as 128,000 bytes
// so that it holds whichever kilobyte API Gateway means.
const DefaultMaxFrame = 128_000

func (s *Sockets) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *Sockets) now() time.Time {
	if s.Service != nil && s.Service.Now != nil {
		return s.Service.Now()
	}
	return ask.Truncate(time.Now())
}

func (s *Sockets) maxFrame() int {
	if s.MaxFrame > 0 {
		return s.MaxFrame
	}
	return DefaultMaxFrame
}

// Connect is the $connect route: the handshake's checks in the local socket's order, then the
// connection is recorded (not ready) with its space, and loopback.v1 is selected. Nothing can be
// posted to a connection during $connect; recording it puts an INSERT on the table's stream,
// and the fan-out sends the snapshot from there (Greet).
func (s *Sockets) Connect(ctx context.Context, req events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	h := headers(req.Headers, req.MultiValueHeaders)
	// Every refusal is written here; an internal one is logged here, once, with the connection.
	errs := httpapi.Errors{Logger: s.logger()}
	refused := func(err error) (events.APIGatewayProxyResponse, error) {
		return refuse(errs.Refusal(ctx, err, "route", "$connect", "connection", req.RequestContext.ConnectionID)), nil
	}
	if !httpapi.HeaderHasToken(h, "Sec-WebSocket-Protocol", httpapi.Subprotocol) {
		return refused(ask.Errorf(ask.ERequestInvalid, "offer the subprotocol %s", httpapi.Subprotocol))
	}
	if !s.sameOrigin(h.Get("Origin"), h.Get(HostHeader)) {
		return refused(ask.Errorf(httpapi.EOriginForbidden, "the event socket only opens to pages of this deployment"))
	}
	ticket, token, err := httpapi.SocketOffer(h)
	if err != nil {
		return refused(err)
	}
	// The client's watermark when it reconnects (contract revision 6): its greeting is a delta.
	since, err := ask.ParseSince(req.QueryStringParameters["since"])
	if err != nil {
		return refused(err)
	}
	cred, err := s.Gate.CheckSocket(gate.WithClientAddr(ctx, req.RequestContext.Identity.SourceIP), gate.SocketAuth{
		Tickets: s.Tickets, Purpose: httpapi.TicketPurpose, Ticket: ticket, Token: token, Now: s.now(),
	})
	if err != nil {
		return refused(err)
	}
	now := s.now()
	c := &ask.Connection{
		ID: req.RequestContext.ConnectionID, Space: cred.Space, Actor: cred.Actor, CredentialID: cred.ID,
		ConnectedAt: now, ExpiresAt: now.Add(ConnectionTTL), Since: since,
	}
	if err := s.Conns.PutConnection(ctx, c); err != nil {
		return refused(fmt.Errorf("recording the connection: %w", err))
	}
	return events.APIGatewayProxyResponse{
		StatusCode: http.StatusOK,
		Headers: map[string]string{
			"Sec-WebSocket-Protocol": httpapi.Subprotocol,
			httpapi.HeaderRevision:   strconv.Itoa(buildinfo.Revision),
			httpapi.HeaderBuild:      buildinfo.Build,
		},
	}, nil
}

// Disconnect is the $disconnect route: the connection is forgotten. API Gateway calls it on a
// best-effort basis; a connection it misses is removed by the first post that meets 410, or by
// its time to live.
func (s *Sockets) Disconnect(ctx context.Context, req events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	if err := s.Conns.DeleteConnection(ctx, req.RequestContext.ConnectionID); err != nil {
		s.logger().ErrorContext(ctx, "$disconnect", "connection", req.RequestContext.ConnectionID, "err", err)
		return events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError}, nil
	}
	return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil
}

// Default is the $default route: a frame from the client, which is a person's request (contract
// revision 8: a reply), answered as the local socket answers it (httpapi.SocketReplies). The
// answer is the response's body: the route is two-way (a route response, template.yaml), so
// API Gateway sends it back on the same connection and the person's answer waits on no
// @connections call. Two answers go through @connections instead, followed by a close, which a
// response body could not precede: a refusal because the credential that opened the socket was
// revoked, and an answer over API Gateway's 128 KB, which is not sent (closed, the client reads
// the ask over HTTP, as after any socket lost under a reply). A connection not recorded (gone,
// or expired) is closed. (API Gateway refuses a client's frame over 128 KB itself, closing with
// 1009.)
func (s *Sockets) Default(ctx context.Context, req events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	id := req.RequestContext.ConnectionID
	c, err := s.Conns.FindConnection(ctx, id, s.now())
	if err != nil {
		if ask.ErrorCode(err) != ask.ENotFound {
			s.logger().ErrorContext(ctx, "$default", "connection", id, "err", err)
			return events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError}, nil
		}
		s.drop(ctx, id, "a frame from a connection not recorded")
		return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil
	}
	msg, text := []byte(req.Body), !req.IsBase64Encoded
	replies := httpapi.SocketReplies{Service: s.Service, Gate: s.Gate, Errors: httpapi.Errors{Logger: s.Logger}}
	out, err := replies.Answer(ctx, c.Space, c.CredentialID, text, msg)
	switch {
	case ask.ErrorCode(err) == ask.EUnauthorized:
		if perr := s.post(ctx, id, out); perr != nil {
			s.logger().WarnContext(ctx, "answering a frame", "connection", id, "err", perr)
		}
		s.drop(ctx, id, "the credential that opened it was revoked")
		return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil
	case len(out) > s.maxFrame():
		s.logger().WarnContext(ctx, "frame.too_large: the answer to a frame is over API Gateway's message limit; the client reads the ask over HTTP instead",
			"connection", id, "bytes", len(out), "limit", s.maxFrame())
		s.drop(ctx, id, "its answer is over API Gateway's 128 KB: the client reads the ask instead")
		return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil
	}
	return events.APIGatewayProxyResponse{StatusCode: http.StatusOK, Body: string(out)}, nil
}

// drop closes a connection at API Gateway and forgets it; its client reconnects for a fresh
// snapshot.
func (s *Sockets) drop(ctx context.Context, id, why string) {
	ctx = context.WithoutCancel(ctx)
	s.logger().InfoContext(ctx, "closing a connection", "connection", id, "why", why)
	if err := s.Poster.Close(ctx, id); err != nil {
		s.logger().WarnContext(ctx, "closing a connection", "connection", id, "err", err)
	}
	if err := s.Conns.DeleteConnection(ctx, id); err != nil {
		s.logger().WarnContext(ctx, "forgetting a connection", "connection", id, "err", err)
	}
}

// refuse answers a handshake with its Problem, as the local socket does before the upgrade
// (httpapi.ProblemFor: the same status, headers and body), and with the revision headers the
// local API sets on every response. API Gateway turns a $connect response other than 2xx into a
// refused handshake.
func refuse(f httpapi.Refusal) events.APIGatewayProxyResponse {
	h := map[string]string{
		httpapi.HeaderRevision: strconv.Itoa(buildinfo.Revision),
		httpapi.HeaderBuild:    buildinfo.Build,
	}
	for k := range f.Header {
		h[k] = f.Header.Get(k)
	}
	return events.APIGatewayProxyResponse{StatusCode: f.Status, Headers: h, Body: string(f.Body)}
}

// HostHeader carries the host name a viewer asked CloudFront for: the distribution's viewer
// function sets it on every request it forwards (template.yaml), since the origin gets its own
// host name in Host. A request that did not come through CloudFront may carry anything here; it is
// used only to name the deployment's own address in links and the Origin check, which a caller
// can only turn against itself (a browser cannot set it on a WebSocket or, without a preflight
// that nothing here answers, on a fetch).
const HostHeader = "X-Loopback-Host"

// PublicURL is the deployment's public address for a request: configured, or else
// https://<X-Loopback-Host> when that is a plain host name (CloudFront's viewer function sets
// it from the Host the viewer asked for). It is "" when neither is known.
func PublicURL(configured, forwardedHost string) string {
	if configured != "" {
		return strings.TrimRight(configured, "/")
	}
	host := strings.ToLower(strings.TrimSpace(forwardedHost))
	if host == "" || !hostName.MatchString(host) {
		return ""
	}
	return "https://" + host
}

var hostName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$`)

// sameOrigin is the local socket's Origin rule (httpapi.SameOrigin) against this deployment's
// public URL for the request.
func (s *Sockets) sameOrigin(origin, forwardedHost string) bool {
	return httpapi.SameOrigin(PublicURL(s.PublicURL, forwardedHost), origin)
}

// headers builds an http.Header from an event's headers (API Gateway sends both forms).
func headers(single map[string]string, multi map[string][]string) http.Header {
	h := http.Header{}
	if len(multi) > 0 {
		for k, vs := range multi {
			for _, v := range vs {
				h.Add(k, v)
			}
		}
		return h
	}
	for k, v := range single {
		h.Add(k, v)
	}
	return h
}
