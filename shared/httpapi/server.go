// Package httpapi serves the contract's HTTP API on net/http: one route table, and handlers that
// decode, validate, call the domain service and respond. The local binary serves it directly; the
// Lambdas wrap the same handler for API Gateway.
package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/reqlog"
	"github.com/loopback-hq/loopback/shared/upload"
)

// MaxBodyBytes bounds any request body the API reads: a reply (or anything else) over it is 413.
// It matches the contract's 256 KiB for all of an input, with room for JSON framing.
const MaxBodyBytes = ask.MaxInputBytes + 16<<10

// Server holds what the handlers need. Service, Gate and Logger are required; the event socket's
// fields are optional, and the routes that need them exist only when they are set.
type Server struct {
	Service *ask.Service
	Gate    *gate.Gate
	Logger  *slog.Logger

	// Tickets keeps one-time passes onto the event socket: POST /api/v1/events/tickets.
	Tickets ask.TicketStore

	// Hub feeds the event socket, GET /api/v1/events, where this process holds the sockets (the
	// local binary). On AWS, API Gateway holds them and the stream Lambda feeds them.
	Hub *events.Hub

	// PublicURL is where people reach this deployment, such as http://127.0.0.1:8080: a
	// browser's Origin on the event socket must be its scheme and host.
	PublicURL string

	// Socket tunes the event socket; zero values take the defaults.
	Socket SocketConfig

	// Push serves Web Push's routes (contract revision 2): the VAPID key and the person's
	// devices. Nil where the deployment sends no pushes, and then the routes do not exist.
	Push *PushConfig

	// SocketLimit bounds the event sockets one credential holds at once; nil, no bound.
	SocketLimit *limit.PerKey

	// Revocations closes a socket once the credential that opened it is revoked; nil leaves open
	// sockets alone (a revoked credential still opens no new one).
	Revocations *gate.Revocations

	// Uploads stores images sent to upload tickets and reads them back: PUT
	// /api/v1/uploads/{spaceId}/{token} and GET /api/v1/files/{uploadId}.
	Uploads *upload.Service

	sockets
}

// Handler returns the API's route table, with every middleware applied: revision headers and
// checks, panic recovery, and the gate on every route that needs credentials.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	// Every route serves the person, and takes a person's credential; whoami answers agents too.
	routeFor := func(who audience, method, path string, h http.HandlerFunc) {
		mux.Handle(method+" "+path, s.authenticated(who, h))
		// The same path without a method catches every other method, so a wrong method gets a
		// Problem rather than net/http's plain-text 405.
		mux.Handle(path, s.methodNotAllowed(method))
	}
	route := func(method, path string, h http.HandlerFunc) { routeFor(personsOnly, method, path, h) }
	routeFor(anyone, "GET", "/api/v1/whoami", s.whoami)
	route("GET", "/api/v1/snapshot", s.snapshot)
	route("GET", "/api/v1/asks", s.listAsks)
	route("GET", "/api/v1/asks/{id}", s.readAsk)
	route("POST", "/api/v1/asks/{id}/reply", s.reply)
	if s.Tickets != nil {
		route("POST", "/api/v1/events/tickets", s.issueTicket)
	}
	if s.Hub != nil {
		// The socket checks its own credentials (a ticket or a bearer token) during the handshake.
		mux.Handle("GET /api/v1/events", http.HandlerFunc(s.eventSocket))
		mux.Handle("/api/v1/events", s.methodNotAllowed(http.MethodGet))
	}
	if s.Uploads != nil {
		// No bearer gate: the upload URL is the credential (its token names one ticket, once).
		mux.Handle("PUT /api/v1/uploads/{spaceId}/{token}", http.HandlerFunc(s.storeUpload))
		mux.Handle("/api/v1/uploads/{spaceId}/{token}", s.methodNotAllowed(http.MethodPut))
		route("GET", "/api/v1/files/{uploadId}", s.readFile)
	}
	if s.Push != nil {
		route("GET", "/api/v1/push/key", s.pushKey)
		route("POST", "/api/v1/push/subscriptions", s.subscribePush)
		route("DELETE", "/api/v1/push/subscriptions/{id}", s.unsubscribePush)
	}
	// Everything else under /api/ (another version, a typo) is a Problem too, never net/http's
	// plain-text 404.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, ask.Errorf(ask.ERouteNotFound, "no such endpoint: %s %s (the API is under /api/v1)", r.Method, r.URL.Path))
	})
	return reqlog.Middleware(s.Logger, "api", s.recoverer(s.revisions(s.refuseUncleanPaths(mux))))
}

func (s *Server) methodNotAllowed(allowed string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if allowed == http.MethodGet {
			allowed = "GET, HEAD"
		}
		w.Header().Set("Allow", allowed)
		s.writeError(w, r, ask.Errorf(ask.EMethodNotAllowed, "%s is not allowed here; use %s", r.Method, allowed))
	})
}
