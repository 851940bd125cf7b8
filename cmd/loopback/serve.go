package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"time"

	claudecode "github.com/loopback-hq/loopback/integrations/claude-code"
	"github.com/loopback-hq/loopback/shared/app"
	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/mail"
	"github.com/loopback-hq/loopback/shared/mcptools"
	"github.com/loopback-hq/loopback/shared/push"
	"github.com/loopback-hq/loopback/shared/redact"
	"github.com/loopback-hq/loopback/web"
)

// LocalSpace is the one space of a local Loopback.
const LocalSpace = "local"

// dataDir is a local Loopback's data folder opened (and, with --store dynamodb, its table): the
// store, the owner, and where the kept tokens are.
type dataDir struct {
	db    storage
	owner ask.Actor
	dir   string
}

// openDataDir opens the data folder and the storage c names (storage.go).
func openDataDir(ctx context.Context, c storageConfig) (*dataDir, *backend, error) {
	b, err := openStorage(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return &dataDir{db: b.store, owner: localOwner(), dir: c.dir}, b, nil
}

// serve runs `loopback serve` until ctx ends. ready, when not nil, is told where it listens
// once it does (the tests of this package; a child process's harness uses --ready-file).
func serve(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(Listening)) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	data := fs.String("data", defaultDataDir(), "data folder: the database, uploaded images and the owner's token")
	publicURL := fs.String("public-url", "", "where people reach this Loopback, if not http://ADDR (behind a proxy)")
	maxWait := fs.Duration("max-wait", time.Hour, "how long one blocking MCP call waits before telling the agent to call await_reply")
	quietMaxWait := fs.Duration("quiet-max-wait", mcptools.DefaultQuietMaxWait, "how long a blocking MCP call with no progress token waits (under the official SDKs' 60 s request timeout)")
	claudeMaxWait := fs.Duration("claude-code-max-wait", mcptools.DefaultClaudeCodeMaxWait, "how long a blocking MCP call from Claude Code waits (a person sets theirs with ?maxWait= on the MCP URL)")
	progress := fs.Duration("progress", 15*time.Second, "how often a waiting MCP call sends progress (keeps clients from timing out)")
	limits := limit.Defaults
	fs.IntVar(&limits.WaitsPerCredential, "max-waits", limits.WaitsPerCredential, "blocking MCP calls one credential may have waiting at once (429 beyond)")
	fs.IntVar(&limits.StreamsPerCredential, "max-streams", limits.StreamsPerCredential, "MCP GET streams one credential may have open at once (429 beyond)")
	fs.IntVar(&limits.SocketsPerCredential, "max-sockets", limits.SocketsPerCredential, "event sockets one credential may have open at once")
	fs.IntVar(&limits.AuthFailures, "max-auth-failures", limits.AuthFailures, "wrong tokens from one address a minute before the next is answered 429 instead of 401; a valid token always works (0: no limit)")
	fs.DurationVar(&limits.IdleTimeout, "idle-timeout", limits.IdleTimeout, "how long an idle keep-alive connection is kept")
	fs.DurationVar(&limits.BodyTimeout, "body-timeout", limits.BodyTimeout, "how long a request's body may take to arrive, plus a second per 64 KiB it declares")
	fs.DurationVar(&limits.HeaderTimeout, "header-timeout", limits.HeaderTimeout, "how long a request's headers may take to arrive")
	escalationUnit := fs.Duration("escalation-minute", time.Minute, "how long one minute of a space's escalation lasts (tests shorten it)")
	deltaSlack := fs.Duration("delta-slack", ask.DefaultDeltaSlack, "how far before a reconnecting inbox's watermark the socket's delta starts (tests shorten it)")
	debugAddr := fs.String("debug-addr", "", "serve Go's pprof profiles on this address (such as 127.0.0.1:6060); off when empty")
	store := fs.String("store", envOr("LOOPBACK_STORE", "sqlite"), "where asks are kept: sqlite (in the data folder) or dynamodb (the standard AWS_* environment says where; AWS_ENDPOINT_URL for an emulator)")
	table := fs.String("table", os.Getenv("LOOPBACK_TABLE"), "the DynamoDB table, with --store dynamodb")
	bucket := fs.String("bucket", os.Getenv("LOOPBACK_BUCKET"), "the S3 bucket for uploaded images, with --store dynamodb (empty: the data folder)")
	create := fs.Bool("create", false, "with --store dynamodb, create the table and bucket if they do not exist")
	openAsks := openAskFlags(fs)
	slackOpts := slackFlagSet(fs)
	smtp := smtpFlags(fs)
	ssoOpts := ssoFlagSet(fs)
	readyFile := readyFileFlag(fs)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	// Every log line passes through redact: no credential (a bearer token, an upload URL's
	// token, a ticket) is ever written, whoever logs it.
	logger := slog.New(redact.New(slog.NewTextHandler(stderr, nil)))
	slog.SetDefault(logger)
	ssoCfg, err := ssoOpts.config(LocalSpace)
	if err != nil {
		return err
	}

	a, stored, err := openDataDir(ctx, storageConfig{kind: *store, dir: *data, table: *table, bucket: *bucket, create: *create})
	if err != nil {
		return err
	}
	defer a.db.Close()
	token, err := a.ownerCredential(ctx)
	if err != nil {
		return fmt.Errorf("setting up the owner's token: %w", err)
	}
	agentToken, err := a.agentCredential(ctx)
	if err != nil {
		return fmt.Errorf("setting up the agent's token: %w", err)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	if *publicURL != "" {
		base = strings.TrimRight(*publicURL, "/")
	}

	// Web Push: the deployment's VAPID keys, made once and kept in the data folder; every change
	// that needs the person is pushed to their devices off the request path.
	vapid, err := push.LoadOrCreateKeys(filepath.Join(*data, "vapid.json"))
	if err != nil {
		return fmt.Errorf("setting up Web Push: %w", err)
	}
	pushLoopback := os.Getenv(PushLoopbackEnv) == "1"
	// Signed action links (an email's, a notification's action): their key, made once and kept
	// in the data folder.
	actionKey, err := loadOrCreateActionKey(filepath.Join(*data, actionKeyFile))
	if err != nil {
		return fmt.Errorf("setting up action links: %w", err)
	}
	pusher := &push.Sender{Keys: vapid, Store: a.db, Credentials: a.db, Quiet: a.db, Subscriber: push.Subscriber(base), Logger: logger, AllowLoopback: pushLoopback}
	slackCfg, slackClient, err := slackOpts.config(a.db)
	if err != nil {
		return err
	}
	publish := ask.Publishers{push.NewQueue(ctx, pusher, 2, 1024)}
	// Email (docs/email.md): a notice of each ask to the space's owner, off the request path.
	mailer, err := smtp.notifier(a.db, base, logger)
	if err != nil {
		ln.Close()
		return err
	}
	if mailer != nil {
		publish = append(publish, mail.NewQueue(ctx, mailer, 2, 1024))
	}
	// This process holds the sockets and the waits: the hub reaches both.
	lb := app.New(app.Config{
		Slack:    slackCfg,
		OpenAsks: *openAsks,
		Storage:  a.db, Blobs: stored.blobs, Hub: events.NewHub(), Publish: publish,
		PublicURL: base, Limits: limits, Logger: logger, EscalationUnit: *escalationUnit, OAuth: oauthStore(a.db),
		Passkeys: true,
		Wait:     app.Wait{MaxWait: *maxWait, Progress: *progress, QuietMaxWait: *quietMaxWait, ClaudeCodeMaxWait: *claudeMaxWait},
		Push: &httpapi.PushConfig{
			PublicKey: func(context.Context) (string, error) { return vapid.PublicKey, nil },
			Store:     a.db, Rules: ask.PushRules{AllowLoopback: pushLoopback},
		},
		ActionKey: func(context.Context) ([]byte, error) { return actionKey, nil },
		SSO:       ssoCfg, SSOLinks: true,
	})
	lb.Service.DeltaSlack = *deltaSlack
	defer lb.Waiter.Drain() // runs before the deferred db.Close: a wait's bookkeeping lands first
	// A notification's buttons carry action links signed for the device's person. Set before
	// the server listens: no change reaches the push queue before then.
	if lb.Actions != nil {
		pusher.Sign = push.ActionLinks(lb.Actions)
	}
	if mailer != nil {
		mailer.Actions = lb.Actions // before anything is served: a notice's links are the app's
	}

	// Shutting down first ends every wait with a result that tells its agent to call await_reply;
	// requests also run on a context that is cancelled if they still hold the shutdown up.
	requests, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	srv := &http.Server{
		// A request's headers must arrive within HeaderTimeout and its body within its read
		// deadline (httpapi.BodyDeadline); an idle keep-alive connection is closed after
		// IdleTimeout (docs/limits.md).
		Handler:           httpapi.BodyDeadline(limits.BodyTimeout, lb.Handler(web.HandlerFor(*publicURL))),
		ReadHeaderTimeout: limits.HeaderTimeout, IdleTimeout: limits.IdleTimeout,
		BaseContext: func(net.Listener) context.Context { return requests },
		ErrorLog:    slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(lb.API.CloseSockets) // Shutdown does not wait for upgraded connections
	// Before saying it is running: the inbox must never show an agent waiting that is not.
	if err := lb.Service.SettleWaiting(ctx, LocalSpace); err != nil {
		ln.Close()
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return fmt.Errorf("settling waiting flags: %w", err)
	}
	// The log line first: whoever waits for the welcome finds the log already saying where.
	logger.Info("serving", "addr", ln.Addr().String(), "data", *data, "store", stored.where)
	printWelcome(stdout, base, token, agentToken, pluginMarketplace(*data))
	if lb.SSO != nil {
		fmt.Fprintf(stdout, "Single sign-on: the inbox offers \"Sign in with %s\" (%s). The provider must allow the redirect URI %s/auth/oidc/callback.\n\n",
			lb.SSO.Name(), lb.SSO.Issuer(), base)
	}
	// A database file deleted or replaced under the server stops it, loudly (datafiles.go).
	ctx, stopServing := context.WithCancelCause(ctx)
	defer stopServing(nil)
	if stored.dbPath != "" {
		opened, err := os.Stat(stored.dbPath)
		if err != nil {
			return fmt.Errorf("the database file: %w", err)
		}
		go watchDatabase(ctx, stored.dbPath, opened, stopServing, logger)
	}
	go sweep(ctx, lb, stored.cleanup, logger)
	stopSlack := slackOpts.start(ctx, lb, slackClient, logger)
	defer stopSlack() // before the database closes: a click's work may still be writing
	// Deadlines and escalation, on time: one timer for the nearest due time (app.DeadlineClock).
	go lb.Deadlines.Run(ctx)
	if *debugAddr != "" {
		go serveProfiles(*debugAddr, logger)
	}

	// Ready, once all of it runs: whoever started it may now use it, and delete its files.
	unannounce, err := announce(*readyFile, listening(ln, base), ready)
	if err != nil {
		ln.Close()
		return err
	}
	defer unannounce()

	err = serveUntil(ctx, srv, ln, logger, lb.Waiter.Shutdown, cancelRequests)
	if cause := context.Cause(ctx); errors.Is(cause, errDatabaseGone) {
		return cause
	}
	return err
}

// shutdownGrace is how long a stopping server lets its connections finish.
const shutdownGrace = 3 * time.Second

// serveUntil serves srv on ln until ctx ends, then stops: first letGo (the waits, or the
// deployment's function instances, told to let their callers go with a result), then a graceful
// Shutdown of up to shutdownGrace, and if connections are still busy after it, cut (which may be
// nil: cancel what still runs) and Close. It returns Serve's error, or nil after a stop. `loopback
// serve` and `loopback aws-local` both stop this way.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener, logger *slog.Logger, letGo, cut func()) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	letGo()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Connections still busy (or idle ones a client never used): cut them.
		if cut != nil {
			cut()
		}
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// sweep clears what nobody will come back for, every few seconds: leases of agents that stopped
// following without saying so (a process killed mid-wait), which un-marks their asks as waiting;
// and expired tickets, tasks and upload tickets (cleanup; on DynamoDB its time to live does that).
func sweep(ctx context.Context, lb *app.App, cleanup func(context.Context, time.Time) error, logger *slog.Logger) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			now := lb.Service.Now()
			_, err := lb.Sweep(ctx)
			if err == nil && cleanup != nil {
				err = cleanup(ctx, now)
			}
			if err != nil && ctx.Err() == nil {
				logger.Warn("sweeping", "err", err)
			}
		case <-ctx.Done():
			return
		}
	}
}

// serveProfiles serves net/http/pprof on its own address, never on the public one.
func serveProfiles(addr string, logger *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	logger.Info("profiles", "addr", addr)
	if err := http.ListenAndServe(addr, mux); err != nil {
		logger.Warn("profiles", "err", err)
	}
}

// PushLoopbackEnv, set to 1, lets push subscriptions and pushes reach loopback addresses over
// http: for the tests' stand-in push service only. Never set it on a deployment.
const PushLoopbackEnv = "LOOPBACK_PUSH_TEST_LOOPBACK"

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func defaultDataDir() string {
	if d := os.Getenv("LOOPBACK_DATA"); d != "" {
		return d
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".loopback")
	}
	return ".loopback"
}

// printWelcome tells the person where everything is. The inbox link carries the person's token
// in the URL fragment, which a browser never sends to a server; the lines for agents carry the
// agent's token, which opens /mcp and nothing else. Never hand an agent the inbox link.
func printWelcome(w io.Writer, base, token, agentToken, marketplace string) {
	fmt.Fprintf(w, `Loopback is running.

  Inbox:  %[1]s/#token=%[2]s
          (your sign-in link: it holds your own token; keep it to yourself, and out of agents' reach)
  API:    %[1]s/api/v1
  MCP:    %[1]s/mcp

For your agents, two ways:

1. The URL alone (MCP OAuth): the agent's client opens your browser, you approve it in the inbox,
   and it gets an agent credential of its own (it can ask you, never answer for you; revoke it
   under Connected agents, or with loopback token revoke):
  claude mcp add --transport http loopback %[1]s/mcp
  Cursor (~/.cursor/mcp.json, "mcpServers"):  "loopback": {"url": "%[1]s/mcp"}
  VS Code (.vscode/mcp.json, "servers"):      "loopback": {"type": "http", "url": "%[1]s/mcp"}
  Codex:  codex mcp add loopback --url %[1]s/mcp

2. A pasted agent token, for headless agents, CI and clients without OAuth:

Add it to Claude Code:
  claude mcp add --transport http loopback %[1]s/mcp --header "Authorization: Bearer %[3]s"

Add it to Cursor (~/.cursor/mcp.json, under "mcpServers"):
  "loopback": {"url": "%[1]s/mcp", "headers": {"Authorization": "Bearer %[3]s"}}

Add it to VS Code (.vscode/mcp.json, under "servers"):
  "loopback": {"type": "http", "url": "%[1]s/mcp", "headers": {"Authorization": "Bearer %[3]s"}}

Approve Claude Code's tool use from your phone (docs/approvals.md): the plugin adds the MCP server
and hooks that send its permission prompts here (they run this binary: keep loopback on PATH).
  export LOOPBACK_URL=%[1]s LOOPBACK_AGENT_TOKEN=%[3]s
  claude plugin marketplace add %[4]s
  claude plugin install loopback@loopback

One agent token per machine or agent: loopback token create --name NAME; a teammate: loopback token create --person --name NAME.

`, base, token, agentToken, marketplace)
}

// pluginMarketplace is where the Claude Code plugin's marketplace is: integrations/claude-code of
// the checkout this binary was built in (bin/loopback beside it), or else the copy the binary
// carries, written into the data folder so that it installs wherever the binary runs.
func pluginMarketplace(dataDir string) string {
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			dir := filepath.Join(filepath.Dir(filepath.Dir(exe)), "integrations", "claude-code")
			if _, err := os.Stat(filepath.Join(dir, ".claude-plugin", "marketplace.json")); err == nil {
				return dir
			}
		}
	}
	dir, err := filepath.Abs(filepath.Join(dataDir, "claude-code-plugin"))
	if err == nil {
		dir, err = claudecode.WriteTo(dir)
	}
	if err != nil {
		return "<your Loopback checkout>/integrations/claude-code"
	}
	return dir
}
