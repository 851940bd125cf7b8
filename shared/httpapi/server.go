// Package httpapi serves the contract's HTTP API on net/http: one route table, and handlers that
// decode, validate, call the domain service and respond. The local binary serves it directly; the
// Lambdas wrap the same handler for API Gateway.
package httpapi

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/oauth"
	"github.com/loopback-hq/loopback/shared/passkey"
	"github.com/loopback-hq/loopback/shared/reqlog"
	"github.com/loopback-hq/loopback/shared/sso"
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

	// Slack serves the person's Slack settings (contract revision 4): links, link codes, the
	// space's channel. Nil where the deployment keeps no Slack state; then the routes do not exist.
	Slack *SlackConfig

	// SocketLimit bounds the event sockets one credential holds at once; nil, no bound.
	SocketLimit *limit.PerKey

	// Revocations closes a socket once the credential that opened it is revoked; nil leaves open
	// sockets alone (a revoked credential still opens no new one).
	Revocations *gate.Revocations

	// Uploads stores images sent to upload tickets and reads them back: PUT
	// /api/v1/uploads/{spaceId}/{token} and GET /api/v1/files/{uploadId}.
	Uploads *upload.Service

	// Connect is MCP OAuth's authorization server, whose consent page's API this serves
	// (contract revision 5); nil where the deployment has none, and then those routes do not
	// exist. TaskStore is where revoking an agent (DELETE /api/v1/agents/{id}) ends its tasks.
	Connect   *oauth.Server
	TaskStore ask.TaskStore
	// Actions takes signed action links (an email's, a notification's): GET and POST
	// /api/v1/actions/{token}. Nil: the routes do not exist.
	Actions *ask.Actions

	// SSO is the deployment's single sign-on (shared/sso), which GET /api/v1/sso describes to the
	// signed-out page; nil: none is configured (the route says so). SSOLinks keeps the identities
	// linked to persons: GET and DELETE /api/v1/sso/links; nil: those routes do not exist.
	SSO      *sso.Server
	SSOLinks ask.SSOStore

	// Mail keeps each person's address for email notices: GET and PUT /api/v1/settings/mail.
	// Nil: the routes do not exist.
	Mail ask.MailStore

	// Passkeys signs people in with passkeys (contract revision 6): registering and removing
	// them, and the sign-in that makes a browser's person credential. Nil: the routes do not exist.
	Passkeys *passkey.Service
	// PasskeyURL, when set, is the deployment's address for a request, whose host is the
	// passkeys' relying party (on AWS: PublicUrl, or the host CloudFront was asked for). Nil:
	// PublicURL.
	PasskeyURL func(*http.Request) string
	// Passes makes and redeems pairing codes and invites (contract revision 6): signing a phone
	// or a teammate in without a pasted token. Nil: the routes do not exist.
	Passes *gate.Passes

	sockets
}

// A Route is one entry of the API's route table: what Handler serves, and what template.yaml must
// route to a function (a test in infra/templatecheck holds the two together).
type Route struct {
	Method  string // GET, POST, PUT or DELETE; a GET route answers HEAD too
	Pattern string // net/http's pattern, such as /api/v1/asks/{id}; several methods may share one
	// Gated: the route takes a bearer credential, which the gate checks (and records as used).
	Gated bool
	// Socket: the event socket, which on AWS is the WebSocket API rather than an HTTP API route.
	Socket bool
}

// Routes lists every route Handler can serve, in its order, whichever of the Server's optional
// fields are set (the routes of a field left nil are not served).
func Routes() []Route {
	var s Server
	entries := s.routes()
	out := make([]Route, len(entries))
	for i, e := range entries {
		out[i] = e.Route
	}
	return out
}

// routeEntry is a Route with its handler: who may call it (when gated) and whether this Server
// serves it.
type routeEntry struct {
	Route
	who audience
	on  bool
	h   http.HandlerFunc
}

// routes is the route table, Handler's and Routes' one source.
func (s *Server) routes() []routeEntry {
	// Every gated route serves the person, and takes a person's credential; whoami answers agents too.
	gated := func(who audience, method, path string, h http.HandlerFunc, on bool) routeEntry {
		return routeEntry{Route: Route{Method: method, Pattern: path, Gated: true}, who: who, on: on, h: h}
	}
	open := func(method, path string, h http.HandlerFunc, on bool) routeEntry {
		return routeEntry{Route: Route{Method: method, Pattern: path}, on: on, h: h}
	}
	socket := open("GET", "/api/v1/events", s.eventSocket, s.Hub != nil)
	socket.Socket = true
	return []routeEntry{
		gated(anyone, "GET", "/api/v1/whoami", s.whoami, true),
		gated(personsOnly, "GET", "/api/v1/snapshot", s.snapshot, true),
		gated(personsOnly, "GET", "/api/v1/asks", s.listAsks, true),
		gated(personsOnly, "GET", "/api/v1/asks/{id}", s.readAsk, true),
		// Search and the example ask (revision 6).
		gated(personsOnly, "GET", "/api/v1/search", s.search, true),
		gated(personsOnly, "POST", "/api/v1/examples", s.sendExample, true),
		gated(personsOnly, "POST", "/api/v1/asks/{id}/reply", s.reply, true),
		// Revision 6: a person closes any open ask, whoever's move it is.
		gated(personsOnly, "POST", "/api/v1/asks/{id}/dismiss", s.dismiss, true),
		// Revision 6: each person's own marks on asks (unread, snoozed).
		gated(personsOnly, "PUT", "/api/v1/asks/{id}/mark", s.setMark, true),
		gated(personsOnly, "GET", "/api/v1/marks", s.listMarks, true),
		gated(personsOnly, "POST", "/api/v1/events/tickets", s.issueTicket, s.Tickets != nil),
		// The socket checks its own credentials (a ticket or a bearer token) during the handshake.
		socket,
		// No bearer gate: the upload URL is the credential (its token names one ticket, once).
		open("PUT", "/api/v1/uploads/{spaceId}/{token}", s.storeUpload, s.Uploads != nil),
		gated(personsOnly, "GET", "/api/v1/files/{uploadId}", s.readFile, s.Uploads != nil),
		gated(personsOnly, "GET", "/api/v1/push/key", s.pushKey, s.Push != nil),
		gated(personsOnly, "POST", "/api/v1/push/subscriptions", s.subscribePush, s.Push != nil),
		gated(personsOnly, "DELETE", "/api/v1/push/subscriptions/{id}", s.unsubscribePush, s.Push != nil),
		gated(personsOnly, "GET", "/api/v1/slack", s.slackSettings, s.Slack != nil),
		gated(personsOnly, "POST", "/api/v1/slack/codes", s.slackCode, s.Slack != nil),
		gated(personsOnly, "DELETE", "/api/v1/slack/link", s.slackUnlink, s.Slack != nil),
		gated(personsOnly, "PUT", "/api/v1/slack/channel", s.slackChannel, s.Slack != nil),
		gated(personsOnly, "GET", "/api/v1/push/quiet-hours", s.readQuietHours, s.Push != nil),
		gated(personsOnly, "PUT", "/api/v1/push/quiet-hours", s.setQuietHours, s.Push != nil),
		gated(personsOnly, "DELETE", "/api/v1/push/quiet-hours", s.clearQuietHours, s.Push != nil),
		gated(personsOnly, "GET", "/api/v1/rules", s.listRules, true),
		gated(personsOnly, "POST", "/api/v1/rules", s.createRule, true),
		gated(personsOnly, "PUT", "/api/v1/rules/{id}", s.updateRule, true),
		gated(personsOnly, "DELETE", "/api/v1/rules/{id}", s.deleteRule, true),
		// Connecting agents (revision 5): the consent page and "Connected agents".
		gated(personsOnly, "GET", "/api/v1/connect/requests/{id}", s.readConnect, s.Connect != nil),
		gated(personsOnly, "POST", "/api/v1/connect/requests/{id}/decision", s.decideConnect, s.Connect != nil),
		gated(personsOnly, "GET", "/api/v1/agents", s.listAgents, true),
		gated(personsOnly, "DELETE", "/api/v1/agents/{id}", s.disconnectAgent, true),
		// No bearer gate: the signed token is the credential (one person, one ask, once).
		open("GET", "/api/v1/actions/{token}", s.readAction, s.Actions != nil),
		open("POST", "/api/v1/actions/{token}", s.takeAction, s.Actions != nil),
		gated(personsOnly, "GET", "/api/v1/settings/mail", s.readMailSettings, s.Mail != nil),
		gated(personsOnly, "PUT", "/api/v1/settings/mail", s.writeMailSettings, s.Mail != nil),
		gated(personsOnly, "GET", "/api/v1/settings/escalation", s.readEscalation, true),
		gated(personsOnly, "PUT", "/api/v1/settings/escalation", s.updateEscalation, true),
		// Passkeys (revision 6): a person's own; an agent never registers, lists or removes one.
		// No bearer gate on a sign-in: the passkey is the credential.
		gated(personsOnly, "GET", "/api/v1/passkeys", s.listPasskeys, s.Passkeys != nil),
		gated(personsOnly, "DELETE", "/api/v1/passkeys/{id}", s.removePasskey, s.Passkeys != nil),
		gated(personsOnly, "POST", "/api/v1/passkey-registrations", s.beginPasskeyRegistration, s.Passkeys != nil),
		gated(personsOnly, "POST", "/api/v1/passkey-registrations/{id}", s.finishPasskeyRegistration, s.Passkeys != nil),
		open("POST", "/api/v1/passkey-sign-ins", s.beginPasskeySignIn, s.Passkeys != nil),
		open("POST", "/api/v1/passkey-sign-ins/{id}", s.finishPasskeySignIn, s.Passkeys != nil),
		// Single sign-on (revision 6): whether it is offered, before anyone signs in; the links.
		open("GET", "/api/v1/sso", s.ssoStatus, true),
		gated(personsOnly, "GET", "/api/v1/sso/links", s.listSSOLinks, s.SSOLinks != nil),
		gated(personsOnly, "DELETE", "/api/v1/sso/links/{id}", s.unlinkSSO, s.SSOLinks != nil),
		// Pairing a device and inviting a teammate (revision 6): a person makes a code; redeeming
		// one takes no bearer gate (the code in the body is the credential, once).
		gated(personsOnly, "POST", "/api/v1/pairings", s.startPairing, s.Passes != nil),
		gated(personsOnly, "GET", "/api/v1/pairings/{id}", s.readPairing, s.Passes != nil),
		open("POST", "/api/v1/signin/pairing", s.redeem(ask.PassPairing), s.Passes != nil),
		gated(personsOnly, "POST", "/api/v1/invites", s.createInvite, s.Passes != nil),
		gated(personsOnly, "GET", "/api/v1/invites", s.listInvites, s.Passes != nil),
		gated(personsOnly, "DELETE", "/api/v1/invites/{id}", s.revokeInvite, s.Passes != nil),
		open("POST", "/api/v1/signin/invite/lookup", s.lookupInvite, s.Passes != nil),
		open("POST", "/api/v1/signin/invite", s.redeem(ask.PassInvite), s.Passes != nil),
	}
}

// Handler returns the API's route table, with every middleware applied: revision headers and
// checks, panic recovery, and the gate on every route that needs credentials.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	s.route(mux, s.routes())
	// Everything else under /api/ (another version, a typo) is a Problem too, never net/http's
	// plain-text 404.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, ask.Errorf(ERouteNotFound, "no such endpoint: %s %s (the API is under /api/v1)", r.Method, r.URL.Path))
	})
	return reqlog.Middleware(s.Logger, "api", s.recoverer(s.revisions(s.refuseUncleanPaths(mux))))
}

// route puts the table's served entries on mux, grouped by path: each method reaches its handler,
// and every other method on the path gets one 405 Problem whose Allow names all the path's methods
// (rather than net/http's plain-text 405).
func (s *Server) route(mux *http.ServeMux, entries []routeEntry) {
	var paths []string // in the table's order
	allow := map[string][]string{}
	for _, e := range entries {
		if !e.on {
			continue
		}
		var h http.Handler = e.h
		if e.Gated {
			h = s.authenticated(e.who, h)
		}
		mux.Handle(e.Method+" "+e.Pattern, h)
		if _, seen := allow[e.Pattern]; !seen {
			paths = append(paths, e.Pattern)
		}
		allow[e.Pattern] = append(allow[e.Pattern], e.Method)
		if e.Method == http.MethodGet {
			allow[e.Pattern] = append(allow[e.Pattern], http.MethodHead) // net/http's GET answers HEAD
		}
	}
	for _, p := range paths {
		mux.Handle(p, s.methodNotAllowed(strings.Join(allow[p], ", ")))
	}
}

// methodNotAllowed is a path's 405: allowed is its Allow header, the methods it serves.
func (s *Server) methodNotAllowed(allowed string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowed)
		s.writeError(w, r, ask.Errorf(EMethodNotAllowed, "%s is not allowed here; use %s", r.Method, allowed))
	})
}
