// Package app wires Loopback once. The local binary (cmd/loopback), every Lambda (shared/awsrt)
// and the end-to-end test harnesses build their Loopback with New, so that the service, the gate,
// the waiter, uploads, the HTTP API and the MCP server are put together the same way everywhere;
// what differs between a laptop and AWS is only what Config is given (a store, where blobs go,
// how a waiting call hears of a reply, whether this process holds the event sockets).
package app

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/hooks"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/mcptools"
	"github.com/loopback-hq/loopback/shared/oauth"
	"github.com/loopback-hq/loopback/shared/passkey"
	"github.com/loopback-hq/loopback/shared/slack"
	"github.com/loopback-hq/loopback/shared/sso"
	"github.com/loopback-hq/loopback/shared/upload"
	"github.com/loopback-hq/loopback/shared/wsapi"
)

// Storage is every store port Loopback uses, on one backend: *sqlite.DB and *dynamo.Store both
// are one.
type Storage interface {
	ask.Store
	ask.CredentialStore
	ask.TicketStore
	ask.LeaseStore
	ask.TaskStore
	ask.UploadStore
	ask.PushStore
	ask.RuleStore
	ask.ActionStore
	ask.MailStore
	ask.SettingsStore
	ask.SlackStore
	ask.PasskeyStore
	ask.PassStore
}

// Config is what differs between deployments. Storage and Logger are required.
type Config struct {
	Storage Storage

	// Blobs keeps uploaded images' bytes (a folder, or S3); nil keeps no uploads, and the tool
	// that asks for one says so.
	Blobs ask.Blobs

	// DirectUploads sends the bytes of uploads straight to Blobs, which must then be
	// upload.DirectBlobs (S3): tickets are presigned PUTs, the bytes are checked after they arrive
	// (App.Uploads.Check, on S3's event), image blocks whose verdict has not arrived check the
	// object on the spot (App.Uploads.CheckUpload), and file
	// reads redirect to presigned GETs. MaxUploadBytes is what a ticket then takes (default
	// upload.DefaultDirectMaxBytes). Off: every byte goes through the PUT route, as locally.
	DirectUploads  bool
	MaxUploadBytes int64

	// Hub is the in-process fan-out, where this process holds the event sockets and the waiting
	// calls (the local binary): every change is published to it, the event socket is served
	// from it, and waiting calls hear of replies through it. Nil on AWS, where the table's
	// stream carries every change.
	Hub *events.Hub

	// Publish receives every change too, after Hub (the local binary's Web Push queue); nil: none.
	Publish ask.Publisher

	// Watcher is how a waiting call hears its ask changed; default mcptools.HubWatcher on Hub.
	// On Lambda, where no hub reaches an instance, it polls the ask's head.
	Watcher mcptools.Watcher

	// PublicURL is where people reach the deployment, such as http://127.0.0.1:8080 or a custom
	// domain: links point there, and a browser's Origin must be it. Empty: taken per request
	// from the X-Loopback-Host header CloudFront's viewer function sets (wsapi.PublicURL).
	PublicURL string

	// OpenAsks are the budgets of what agents may hold open (ask.Bounds); zero fields take the
	// defaults, which keep every response under Lambda's cap. Only the local binary raises them.
	OpenAsks ask.Bounds

	// Push serves the Web Push routes; nil where the deployment sends no pushes.
	Push *httpapi.PushConfig

	// Slack keeps the person's Slack settings and, with a bot, posts asks and takes answers
	// (contract revision 4); nil: no Slack routes.
	Slack *Slack
	// ActionKey gives the deployment's key for signed action links (an email's, a
	// notification's action: ask.Actions), kept as the deployment keeps its other secrets (the
	// data folder locally, SSM on AWS; read on first use). Nil: no action links, and their
	// routes do not exist.
	ActionKey func(ctx context.Context) ([]byte, error)

	// Limits bound what one credential holds at once (waits, MCP streams, event sockets) in this
	// process. Zero fields: no bound.
	Limits limit.Limits
	// WaitStore, when set, counts each credential's waiting calls in the store, across every
	// process that serves MCP (AWS: each Lambda instance), and carries a client's cancel to the
	// instance that waits; nil counts them in this process, which locally is all of them.
	WaitStore ask.WaitStore

	// Throttle counts failed sign-ins per client address across every process of a deployment
	// (the table, on AWS); nil counts them in this process, Limits.AuthFailures a window.
	Throttle gate.Throttle

	// Wait tunes blocking MCP calls and tasks.
	Wait Wait

	// OAuth keeps MCP OAuth's state (shared/oauth): agents' clients sign in with the MCP URL
	// alone, through the inbox's consent page (SQLite locally, the table on AWS). Nil: no OAuth,
	// pasted tokens only.
	OAuth ask.OAuthStore
	// Starts counts what clients with no credential start per client address (gate.Gate.Starts:
	// passkey sign-ins, single sign-on, MCP OAuth's registrations and requests to connect) across
	// every process of a deployment (the table, on AWS); nil counts them in this process.
	Starts gate.Throttle

	// Passkeys lets people sign in to the inbox with passkeys (shared/passkey), the relying
	// party being PublicURL's host. Off: the passkey routes do not exist.
	Passkeys bool
	// PasskeysPerRequest, with Passkeys and no PublicURL (AWS), takes the relying party per
	// request from the host CloudFront names in X-Loopback-Host (App.PublicURL).
	PasskeysPerRequest bool

	// SSO is the deployment's single sign-on through an OpenID Connect provider (shared/sso):
	// the owner's settings (issuer, client, who may sign in) and Space. New fills in its store
	// (Storage, which must keep ask.SSOStore), credentials, public URL, throttle, clock and
	// logger. Nil: none (the signed-out page offers none).
	SSO *sso.Config
	// SSOLinks serves the single sign-on links' routes (GET and DELETE /api/v1/sso/links) from
	// Storage, with or without SSO, so that links stay removable after it is turned off. Off on
	// AWS, where the stack does not route single sign-on yet (docs/deploy.md).
	SSOLinks bool

	// Now is the clock; default the real one.
	Now ask.Clock

	// EscalationUnit is how long one of a space's Escalation.AfterMinutes lasts; zero: a minute.
	// Only tests shorten it.
	EscalationUnit time.Duration

	Logger *slog.Logger
}

// Wait tunes how MCP calls wait for the person. Zero fields take mcptools' defaults.
type Wait struct {
	MaxWait      time.Duration // how long one blocking call waits before it says to call await_reply
	Progress     time.Duration // how often a waiting call reports progress and renews its lease
	QuietMaxWait time.Duration // the bound on a call with no progress token (see mcptools.Waiter)
	// ClaudeCodeMaxWait bounds a call from Claude Code (see mcptools.Waiter).
	ClaudeCodeMaxWait time.Duration
	TaskPoll          time.Duration // the poll interval a task suggests to its client
}

// Slack is a deployment's Slack: where its links and messages are kept, and its app.
type Slack struct {
	Store ask.SlackStore
	// Bot posts asks and takes answers; nil: the settings only (no Slack app configured). New
	// sets its Service, Store and Gate; the caller starts it (Bot.Start) and, locally, its Socket
	// Mode (Bot.RunSocketMode).
	Bot *slack.Bot
	// Command is the app's slash command (default /loopback).
	Command string
}

// App is one wired Loopback. Its handlers are what a deployment serves: API at /api/, MCP at /mcp.
type App struct {
	Service     *ask.Service
	Gate        *gate.Gate
	Uploads     *upload.Service // nil without Blobs
	Revocations *gate.Revocations
	Waiter      *mcptools.Waiter
	API         *httpapi.Server
	MCP         *mcptools.Handler
	Hooks       *hooks.Handler // Claude Code's hooks, /hooks/claude-code (approvals)
	OAuth       *oauth.Server  // MCP OAuth's authorization server; nil without Config.OAuth
	SSO         *sso.Server    // single sign-on; nil without Config.SSO
	Slack       *slack.Bot     // nil without a Slack app
	// Actions makes and takes signed action links; nil without Config.ActionKey.
	Actions *ask.Actions
	// Deadlines closes asks at their deadlines and escalates them, where this process hears of
	// every change (Hub set: the local binary); the caller runs it (DeadlineClock.Run). Nil on AWS.
	Deadlines *DeadlineClock

	cfg Config
}

// New wires a Loopback on cfg.
func New(cfg Config) *App {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	store := cfg.Storage
	svc := ask.NewService(store)
	if cfg.Now != nil {
		svc.Now = cfg.Now
	}
	svc.Leases = store
	svc.Bounds = cfg.OpenAsks
	svc.Rules = store
	svc.Settings, svc.EscalationUnit = store, cfg.EscalationUnit
	a := &App{Service: svc, cfg: cfg}
	var publishers ask.Publishers
	if cfg.Hub != nil {
		publishers = append(publishers, cfg.Hub)
		a.Deadlines = newDeadlineClock(svc, cfg.Logger)
		publishers = append(publishers, a.Deadlines)
	}
	if cfg.Publish != nil {
		publishers = append(publishers, cfg.Publish)
	}
	if cfg.Slack != nil && cfg.Slack.Bot != nil {
		publishers = append(publishers, cfg.Slack.Bot)
	}
	if len(publishers) > 0 {
		svc.Changes = publishers
	}
	a.Gate = &gate.Gate{Credentials: store, Now: svc.Now, Throttle: cfg.Throttle, Starts: cfg.Starts}
	if cfg.Throttle == nil && cfg.Limits.AuthFailures > 0 {
		a.Gate.Throttle = &limit.Failures{Max: cfg.Limits.AuthFailures, Window: cmp.Or(cfg.Limits.AuthWindow, time.Minute)}
	}
	if a.Gate.Starts == nil {
		a.Gate.Starts = &limit.Failures{Max: gate.MaxStartsPerMinute, Window: time.Minute}
	}
	// A revoked credential's sockets and waits end within a second, wherever it was revoked.
	a.Revocations = &gate.Revocations{Credentials: store, Logger: cfg.Logger}
	if cfg.OAuth != nil {
		a.Gate.OAuth = cfg.OAuth
		a.OAuth = oauth.New(oauth.Config{
			Store: cfg.OAuth, Credentials: store, PublicURL: a.PublicURL, Now: svc.Now, Logger: cfg.Logger,
			Starts: a.Gate.Starts,
		})
	}
	if cfg.Blobs != nil {
		svc.Uploads = store
		a.Uploads = &upload.Service{Store: store, Blobs: cfg.Blobs, Now: svc.Now, Logger: cfg.Logger}
		if d, ok := cfg.Blobs.(upload.DirectBlobs); ok && cfg.DirectUploads {
			a.Uploads.Direct, a.Uploads.MaxBytes = d, cmp.Or(cfg.MaxUploadBytes, upload.DefaultDirectMaxBytes)
			svc.UploadCheck = a.Uploads
		}
	}
	if cfg.ActionKey != nil {
		a.Actions = &ask.Actions{Service: svc, Credentials: store, Uses: store, Key: cfg.ActionKey}
	}
	a.API = &httpapi.Server{
		Service: svc, Gate: a.Gate, Logger: cfg.Logger, Tickets: store, Hub: cfg.Hub,
		PublicURL: cfg.PublicURL, Uploads: a.Uploads, Push: cfg.Push, Revocations: a.Revocations,
		SocketLimit: perKey(cfg.Limits.SocketsPerCredential), Actions: a.Actions, Mail: store, Connect: a.OAuth, TaskStore: store,
		Passes: &gate.Passes{Store: store, Gate: a.Gate},
	}
	if cfg.Passkeys && cfg.PublicURL != "" {
		if pk, err := passkey.New(store, a.Gate, cfg.PublicURL); err != nil {
			cfg.Logger.Warn("passkeys are off", "err", err)
		} else {
			pk.Now = svc.Now
			a.API.Passkeys = pk
		}
	} else if cfg.PasskeysPerRequest {
		pk := passkey.PerRequest(store, a.Gate)
		pk.Now = svc.Now
		a.API.Passkeys, a.API.PasskeyURL = pk, a.PublicURL
	}
	if st, ok := store.(ask.SSOStore); ok {
		if cfg.SSOLinks || cfg.SSO != nil {
			a.API.SSOLinks = st
		}
		if cfg.SSO != nil {
			c := *cfg.SSO
			c.Store, c.Credentials, c.PublicURL, c.Throttle, c.Starts, c.Logger = st, store, a.PublicURL, a.Gate.Throttle, a.Gate.Starts, cfg.Logger
			if c.Now == nil {
				c.Now = svc.Now
			}
			s, err := sso.New(c)
			if err != nil {
				// The caller checked the settings (sso.CheckSettings); say so loudly all the same.
				cfg.Logger.Error("single sign-on is off: its settings are refused", "err", err)
			} else {
				a.SSO, a.API.SSO = s, s
			}
		}
	}
	if cfg.Slack != nil {
		a.API.Slack = &httpapi.SlackConfig{Store: cfg.Slack.Store, Connected: cfg.Slack.Bot != nil, Command: cfg.Slack.Command}
		if b := cfg.Slack.Bot; b != nil {
			b.Service, b.Store, b.Gate = svc, cfg.Slack.Store, a.Gate
			if b.PublicURL == "" {
				b.PublicURL = cfg.PublicURL
			}
			if b.Logger == nil {
				b.Logger = cfg.Logger
			}
			a.Slack = b
		}
	}
	watcher := cfg.Watcher
	if watcher == nil && cfg.Hub != nil {
		watcher = mcptools.HubWatcher{Hub: cfg.Hub}
	}
	a.Waiter = &mcptools.Waiter{
		Service: svc, Watcher: watcher, Progress: cfg.Wait.Progress, MaxWait: cfg.Wait.MaxWait,
		QuietMaxWait: cfg.Wait.QuietMaxWait, ClaudeCodeMaxWait: cfg.Wait.ClaudeCodeMaxWait, Revocations: a.Revocations,
	}
	a.MCP = mcptools.New(mcptools.Config{
		Service: svc, Gate: a.Gate, Tasks: store, Waiter: a.Waiter, Uploads: a.Uploads,
		PublicURL: a.PublicURL, TaskPollInterval: cfg.Wait.TaskPoll, Logger: cfg.Logger,
		Waits: waits(cfg), Streams: perKey(cfg.Limits.StreamsPerCredential), OAuth: a.OAuth != nil,
		Turns: cfg.Limits.MCPTurns,
	})
	a.Hooks = &hooks.Handler{
		Approvals: hooks.Domain{Service: svc, Waiter: a.Waiter}, Gate: a.Gate, Logger: cfg.Logger,
	}
	return a
}

// PublicURL is the deployment's address for a request: Config.PublicURL, or else the one
// CloudFront names in X-Loopback-Host.
func (a *App) PublicURL(r *http.Request) string {
	return wsapi.PublicURL(a.cfg.PublicURL, r.Header.Get(wsapi.HostHeader))
}

// Sockets serves API Gateway's WebSocket routes and the table stream's fan-out (AWS), posting
// to poster, the @connections endpoint.
func (a *App) Sockets(poster wsapi.Poster, conns ask.ConnectionStore) *wsapi.Sockets {
	return &wsapi.Sockets{
		Service: a.Service, Gate: a.Gate, Tickets: a.cfg.Storage, Conns: conns,
		Poster: poster, Logger: a.cfg.Logger, PublicURL: a.cfg.PublicURL,
	}
}

// Handler is the deployment on one port: the API at /api and under /api/ (before the mux could clean a path:
// the API answers dot segments and doubled slashes with a Problem, so an upload URL with `..` in
// it is refused, never followed), MCP at /mcp, Claude Code's hooks under /hooks/, and rest (the
// inbox; nil: nothing) at /.
//
// What the API and the inbox send is gzipped for clients that take it (httpapi.Compress, which
// leaves the event socket's handshake alone); /mcp and /hooks/ are not wrapped, since their
// waits stream progress that must not sit in a compressor's buffer.
func (a *App) Handler(rest http.Handler) http.Handler {
	api := httpapi.Compress(a.API.Handler())
	mux := http.NewServeMux()
	mux.Handle("/api/", api)
	mux.Handle("/mcp", a.MCP)
	mux.Handle("/hooks/", a.Hooks)
	if a.OAuth != nil {
		h := a.OAuth.Handler()
		for _, p := range oauth.Paths() {
			mux.Handle(p, h)
		}
	}
	if a.SSO != nil {
		h := a.SSO.Handler()
		for _, p := range sso.Paths() {
			mux.Handle(p, h)
		}
	}
	if a.Slack != nil {
		mux.Handle("/slack/", a.Slack.Handler())
	}
	if rest != nil {
		mux.Handle("/", httpapi.Compress(rest))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The API answers its own paths, and any path that cleans to one of them or to /mcp
		// (`//api/v1/…`, `/x/../mcp`), with a Problem: the mux would redirect them to the clean
		// path with an HTML body.
		p := r.URL.Path
		if c := path.Clean("/" + p); p == "/api" || strings.HasPrefix(p, "/api/") ||
			(p != c && (c == "/api" || strings.HasPrefix(c, "/api/") || c == "/mcp")) {
			api.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// waits is the bound on each credential's waiting calls: in the store when it counts them, or else
// in this process; none (nil) for zero.
func waits(cfg Config) limit.Waits {
	n := cfg.Limits.WaitsPerCredential
	switch {
	case n <= 0:
		return nil
	case cfg.WaitStore != nil:
		return &limit.SharedWaits{Store: cfg.WaitStore, Max: n, Logger: cfg.Logger}
	}
	return perKey(n)
}

// perKey is a bound of max per key; none (nil) for zero.
func perKey(max int) *limit.PerKey {
	if max <= 0 {
		return nil
	}
	return &limit.PerKey{Max: max}
}

// SweepDue closes the asks whose deadlines passed and escalates those due (ask.Service.SweepDue),
// and says how many it changed: on AWS the sweeper function runs it every minute, with Sweep.
// The local binary runs its DeadlineClock instead, which is on time.
func (a *App) SweepDue(ctx context.Context) (int, error) {
	return a.Service.SweepDue(ctx)
}

// sweepBatch is how many expired leases one pass of Sweep reaps.
const sweepBatch = 100

// Sweep reaps leases whose holders stopped renewing them (a process killed mid-wait, a Lambda
// instance stopped), which clears the waiting flag of asks nobody follows any more, and then
// uploads no ask shows a day after their ticket expired (upload.Service.Reap). It goes on
// while whole batches come back (a hundred thousand tasks nobody polls lapse together), until
// ctx ends, and says how many it reaped. The local binary runs it every few seconds; on AWS the
// sweeper function runs it every minute.
func (a *App) Sweep(ctx context.Context) (int, error) {
	total := 0
	for ctx.Err() == nil {
		n, err := a.Service.ReapLeases(ctx, sweepBatch)
		total += n
		if err != nil {
			return total, fmt.Errorf("reaping leases: %w", err)
		}
		if n < sweepBatch {
			break
		}
	}
	if a.Uploads != nil {
		// After the leases, whatever happens here: uploads no ask shows, a day after expiry.
		if _, err := a.Uploads.Reap(ctx); err != nil {
			return total, fmt.Errorf("reaping uploads: %w", err)
		}
	}
	// Pairing codes and invites a day past their expiry (DynamoDB's TTL does it there).
	if err := a.cfg.Storage.ReapPasses(ctx, a.Service.Now().Add(-ask.PassGrace)); err != nil {
		return total, fmt.Errorf("reaping pairing codes and invites: %w", err)
	}
	if a.cfg.OAuth != nil {
		// Requests to connect nobody decided, codes and tokens past their lifetime.
		if err := a.cfg.OAuth.ReapOAuth(ctx, a.Service.Now()); err != nil {
			return total, fmt.Errorf("reaping OAuth's requests and tokens: %w", err)
		}
	}
	if st, ok := a.cfg.Storage.(ask.SSOStore); ok {
		// Sign-ins nobody came back from.
		if err := st.ReapSSO(ctx, a.Service.Now()); err != nil {
			return total, fmt.Errorf("reaping single sign-on's sign-ins: %w", err)
		}
	}
	return total, nil
}
