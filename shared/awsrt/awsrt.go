// Package awsrt wires Loopback for AWS Lambda: the environment a function runs in → AWS clients
// (DynamoDB, S3, API Gateway's @connections) → the shared handlers, the same ones the local
// binary serves (cmd/loopback/serve.go). Every function under functions/ is a few lines: load the
// runtime, start one of its handlers.
//
// Nothing here calls AWS while loading, so a cold start costs no request; clients connect on
// first use. Endpoints can be pointed elsewhere (an emulator such as moto, or the tests'
// stand-in for @connections) with the SDK's standard AWS_ENDPOINT_URL and
// AWS_ENDPOINT_URL_<SERVICE> variables, and LOOPBACK_CONNECTIONS_URL.
package awsrt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/loopback-hq/loopback/shared/apigw"
	"github.com/loopback-hq/loopback/shared/app"
	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/blobs3"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/mail"
	"github.com/loopback-hq/loopback/shared/mcptools"
	"github.com/loopback-hq/loopback/shared/redact"
	"github.com/loopback-hq/loopback/shared/slack"
	"github.com/loopback-hq/loopback/shared/sso"
	"github.com/loopback-hq/loopback/shared/upload"
	"github.com/loopback-hq/loopback/shared/wsapi"
)

// Env is what a function reads from its environment (template.yaml sets it).
type Env struct {
	// Table is the DynamoDB table (LOOPBACK_TABLE). Required.
	Table string
	// LogOutput is where the function's JSON log lines go, every one through shared/redact; nil
	// is standard error, which Lambda sends to CloudWatch. Not from the environment.
	LogOutput io.Writer
	// Bucket is the S3 bucket of uploaded images (LOOPBACK_BUCKET); "" keeps no uploads. Uploads
	// go straight to it with presigned PUTs, and are checked on its ObjectCreated events
	// (CheckUploads).
	Bucket string
	// MaxUploadBytes is what an upload ticket takes (LOOPBACK_MAX_UPLOAD_BYTES, template.yaml's
	// MaxUploadBytes parameter); default upload.DefaultDirectMaxBytes.
	MaxUploadBytes int64
	// ConnectionsURL is the WebSocket API's @connections endpoint, its stage URL over https
	// (LOOPBACK_CONNECTIONS_URL): https://{api}.execute-api.{region}.amazonaws.com/{stage}.
	ConnectionsURL string
	// PublicURL is where people reach the deployment (LOOPBACK_PUBLIC_URL), such as a custom
	// domain. When empty, it is taken per request from X-Loopback-Host, which CloudFront's
	// viewer function sets (see docs/deploy.md).
	PublicURL string
	// MaxWait is how long one blocking MCP call waits (LOOPBACK_MAX_WAIT): just under the MCP
	// function's timeout, so that the call ends with its await_reply result before Lambda
	// stops it. Default 14m30s, for a 15-minute function.
	MaxWait time.Duration
	// Progress is how often a waiting call reports progress and renews its lease
	// (LOOPBACK_PROGRESS). Default 15 s.
	Progress time.Duration
	// Poll is how often a waiting call reads its ask's head (LOOPBACK_POLL). Default 1 s.
	Poll time.Duration
	// QuietMaxWait bounds the wait of a call with no progress token (LOOPBACK_QUIET_MAX_WAIT):
	// the official SDKs cut such a call at 60 s, and CloudFront a response that sent nothing for
	// its origin read timeout (60 s at most without a quota increase; template.yaml sets 60 s on
	// /mcp). Default 50 s (mcptools.DefaultQuietMaxWait).
	QuietMaxWait time.Duration
	// ClaudeCodeMaxWait bounds the wait of a call from Claude Code
	// (LOOPBACK_CLAUDE_CODE_MAX_WAIT). Default 4m30s (mcptools.DefaultClaudeCodeMaxWait).
	ClaudeCodeMaxWait time.Duration
	// MaxWaits bounds the calls one credential has waiting at once across every instance of the
	// MCP function (LOOPBACK_MAX_WAITS), counted in the table: each holds one of the function's
	// executions, so one credential must not be able to take them all. Default 5: a tenth of 50
	// reserved executions, half of a new account's whole quota of 10 when none are reserved.
	MaxWaits int
	// VAPIDParameter is the prefix of the SSM parameters holding the Web Push key pair
	// (LOOPBACK_VAPID_PARAMETER; awsrt/push.go). Empty: no push routes, no pushes.
	VAPIDParameter string
	// ActionKeyParameter is the SSM SecureString holding the action links' signing key
	// (LOOPBACK_ACTION_KEY_PARAMETER; awsrt/actions.go). Empty: no action links.
	ActionKeyParameter string
	// MailFrom is the sender of email notices (LOOPBACK_MAIL_FROM), an SES verified identity;
	// with ActionKeyParameter and PublicURL (the links' address), the stream fan-out mails each
	// opened ask's notice through SES. Empty: no email.
	MailFrom string
	// SlackParameter is the prefix of the SSM parameters holding the Slack app's bot token and
	// signing secret (LOOPBACK_SLACK_PARAMETER, taken when LOOPBACK_SLACK is "on"; awsrt/slack.go).
	// Empty: no Slack app (its settings say it is not connected).
	SlackParameter string
	// SlackAPIURL is another Slack Web API base (LOOPBACK_SLACK_API_URL): the tests' stand-in.
	SlackAPIURL string
	// PushLoopback lets pushes reach loopback addresses (LOOPBACK_PUSH_TEST_LOOPBACK=1): for the
	// tests' stand-in push service only.
	PushLoopback bool
	// SSO is the deployment's single sign-on through an OpenID Connect provider (shared/sso),
	// from LOOPBACK_OIDC_ISSUER, _CLIENT_ID, _NAME, _ALLOW, _OWNER and _SPACE (template.yaml's
	// Oidc* parameters); nil without an issuer. Its client secret is an SSM SecureString,
	// SSOSecretParameter, read on the first sign-in.
	SSO *sso.Config
	// SSOSecretParameter is the SSM SecureString holding the client secret
	// (LOOPBACK_OIDC_SECRET_PARAMETER). Missing in SSM: none (a public client, PKCE alone).
	SSOSecretParameter string
	// EscalationUnit is how long one of a space's escalation minutes lasts
	// (LOOPBACK_ESCALATION_UNIT); zero: a minute. Only tests shorten it.
	EscalationUnit time.Duration
}

// Defaults of Env.
const (
	DefaultMaxWait  = 14*time.Minute + 30*time.Second
	DefaultProgress = 15 * time.Second
	DefaultPoll     = time.Second
	DefaultQuiet    = mcptools.DefaultQuietMaxWait
	DefaultMaxWaits = 5
)

// EnvFromOS reads Env from the process's environment.
func EnvFromOS() (Env, error) { return EnvFrom(os.Getenv) }

// EnvFrom reads Env from an environment: a function's own on Lambda, or what template.yaml
// gives each function under aws-local (shared/awslocal), so that a variable the template forgets
// is missing there too.
func EnvFrom(getenv func(string) string) (Env, error) {
	e := Env{
		Table:              getenv("LOOPBACK_TABLE"),
		Bucket:             getenv("LOOPBACK_BUCKET"),
		ConnectionsURL:     getenv("LOOPBACK_CONNECTIONS_URL"),
		PublicURL:          getenv("LOOPBACK_PUBLIC_URL"),
		VAPIDParameter:     getenv("LOOPBACK_VAPID_PARAMETER"),
		ActionKeyParameter: getenv("LOOPBACK_ACTION_KEY_PARAMETER"),
		MailFrom:           getenv("LOOPBACK_MAIL_FROM"),
		PushLoopback:       getenv("LOOPBACK_PUSH_TEST_LOOPBACK") == "1",
		SlackAPIURL:        getenv("LOOPBACK_SLACK_API_URL"),
	}
	if getenv("LOOPBACK_SLACK") == "on" {
		e.SlackParameter = getenv("LOOPBACK_SLACK_PARAMETER")
	}
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"LOOPBACK_MAX_WAIT", &e.MaxWait}, {"LOOPBACK_PROGRESS", &e.Progress}, {"LOOPBACK_POLL", &e.Poll}, {"LOOPBACK_QUIET_MAX_WAIT", &e.QuietMaxWait},
		{"LOOPBACK_CLAUDE_CODE_MAX_WAIT", &e.ClaudeCodeMaxWait}, {"LOOPBACK_ESCALATION_UNIT", &e.EscalationUnit}} {
		if v := getenv(d.name); v != "" {
			t, err := time.ParseDuration(v)
			if err != nil || t <= 0 {
				return e, fmt.Errorf("%s=%q: want a duration such as 14m30s", d.name, v)
			}
			*d.to = t
		}
	}
	if v := getenv("LOOPBACK_MAX_WAITS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return e, fmt.Errorf("LOOPBACK_MAX_WAITS=%q: want a number of calls such as 10", v)
		}
		e.MaxWaits = n
	}
	if v := getenv("LOOPBACK_MAX_UPLOAD_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return e, fmt.Errorf("LOOPBACK_MAX_UPLOAD_BYTES=%q: want a number of bytes such as 20971520", v)
		}
		e.MaxUploadBytes = n
	}
	if iss := strings.TrimRight(getenv("LOOPBACK_OIDC_ISSUER"), "/"); iss != "" {
		c := &sso.Config{Issuer: iss, ClientID: getenv("LOOPBACK_OIDC_CLIENT_ID"), Name: getenv("LOOPBACK_OIDC_NAME"),
			Allow: splitList(getenv("LOOPBACK_OIDC_ALLOW")), Owners: splitList(getenv("LOOPBACK_OIDC_OWNER")), Space: getenv("LOOPBACK_OIDC_SPACE")}
		if err := sso.CheckSettings(c.Issuer, c.ClientID, c.Allow, c.Owners); err != nil {
			return e, fmt.Errorf("single sign-on (LOOPBACK_OIDC_*): %w", err)
		}
		if c.Space == "" {
			return e, errors.New("single sign-on: LOOPBACK_OIDC_SPACE is not set: the space people sign in to (sp_…, make bootstrap prints it)")
		}
		e.SSO, e.SSOSecretParameter = c, getenv("LOOPBACK_OIDC_SECRET_PARAMETER")
	}
	if e.Table == "" {
		return e, errors.New("LOOPBACK_TABLE is not set: the DynamoDB table's name")
	}
	return e, nil
}

// splitList is a comma-separated list, its entries trimmed, empty ones dropped.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (e Env) withDefaults() Env {
	if e.MaxWait <= 0 {
		e.MaxWait = DefaultMaxWait
	}
	if e.Progress <= 0 {
		e.Progress = DefaultProgress
	}
	if e.Poll <= 0 {
		e.Poll = DefaultPoll
	}
	if e.QuietMaxWait <= 0 {
		e.QuietMaxWait = DefaultQuiet
	}
	if e.MaxWaits <= 0 {
		e.MaxWaits = DefaultMaxWaits
	}
	return e
}

// limits are the bounds of a function: limit.Defaults, with the waits per credential counted
// across instances and bounded by MaxWaits.
func limits(env Env) limit.Limits {
	l := limit.Defaults
	l.WaitsPerCredential = env.MaxWaits
	return l
}

// Runtime is a function's wired Loopback: clients, store, and the app (shared/app) on them.
// Build it once per process (at init), and start one of its handlers.
type Runtime struct {
	Env     Env
	Store   *dynamo.Store
	Blobs   *blobs3.Blobs // nil without a bucket
	App     *app.App
	Service *ask.Service    // App.Service
	Gate    *gate.Gate      // App.Gate
	Uploads *upload.Service // App.Uploads; nil without a bucket
	Poster  wsapi.Poster    // nil without ConnectionsURL
	Logger  *slog.Logger
	// SSM reads the Web Push keys; nil without Env.VAPIDParameter.
	SSM   SSM
	vapid *vapid
	// Mailer sends email notices through SES; nil without Env.MailFrom (or an action key).
	Mailer *mail.Notifier
	// slack is the Slack app; nil without Env.SlackParameter.
	slack *slackApp
}

// Load builds the runtime from the process's environment and the standard AWS configuration
// (the function's role, AWS_REGION, and any AWS_ENDPOINT_URL* overrides).
func Load(ctx context.Context) (*Runtime, error) {
	env, err := EnvFromOS()
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	return New(cfg, env)
}

// MustLoad is Load for a function's main: it exits when the runtime cannot be built, which
// Lambda reports as an init error.
func MustLoad() *Runtime {
	rt, err := Load(context.Background())
	if err != nil {
		slog.Error("loopback: cannot start", "err", err)
		os.Exit(1)
	}
	return rt
}

// New builds the runtime on an AWS configuration.
func New(cfg aws.Config, env Env) (*Runtime, error) {
	if env.Table == "" {
		return nil, errors.New("awsrt: no table")
	}
	env = env.withDefaults()
	out := env.LogOutput
	if out == nil {
		out = os.Stderr
	}
	logger := slog.New(redact.New(slog.NewJSONHandler(out, nil)))
	slog.SetDefault(logger) // what logs through slog's default comes out as JSON too, redacted
	store := dynamo.New(dynamodb.NewFromConfig(cfg), env.Table)
	rt := &Runtime{Env: env, Store: store, Logger: logger}
	c := app.Config{
		// On AWS there is no hub: the table's stream carries every change to the fan-out, and a
		// waiting call polls its ask's head (HeadWatcher).
		Storage: store, PublicURL: env.PublicURL, Logger: logger,
		Watcher: dynamo.HeadWatcher{Heads: store, Interval: env.Poll},
		Wait: app.Wait{MaxWait: env.MaxWait, Progress: env.Progress, QuietMaxWait: env.QuietMaxWait,
			ClaudeCodeMaxWait: env.ClaudeCodeMaxWait},
		// A Lambda instance serves one request at a time: the waits each credential holds are
		// counted in the table (WaitStore), across instances.
		Limits: limits(env), WaitStore: store,
		// Failed sign-ins are counted in the table: every instance sees the same count.
		Throttle:       &dynamo.SignInThrottle{Store: store, Max: limit.Defaults.AuthFailures, Window: limit.Defaults.AuthWindow},
		EscalationUnit: env.EscalationUnit,
		// Slack's settings (links, codes, the space's channel), kept in the table. The app that
		// posts and takes answers is not the app's publisher here: the stream's fan-out delivers
		// (Stream), and SlackAppFunction takes Slack's requests (API).
		Slack: &app.Slack{Store: store},
		// MCP OAuth (docs/design/oauth.md): agents' clients sign in with the MCP URL alone. Its
		// requests, codes and tokens are items with a TTL in the table.
		OAuth: store,
		// Passkeys (shared/passkey): the relying party is PublicURL's host, or else the host
		// CloudFront names for the request.
		Passkeys: true, PasskeysPerRequest: true,
		// Starts without a credential (MCP OAuth's registrations and requests to connect, passkey
		// sign-ins, single sign-on) are counted per address and kind in the table too, beside the
		// failed sign-ins (SIGNIN#<kind>:<address> items, gate.StartKey): a Lambda instance's own
		// count would bound nothing.
		Starts: &dynamo.SignInThrottle{Store: store, Max: gate.MaxStartsPerMinute, Window: time.Minute},
	}
	if env.Bucket != "" {
		rt.Blobs = blobs3.New(blobs3.NewClient(cfg), env.Bucket)
		c.Blobs, c.DirectUploads, c.MaxUploadBytes = rt.Blobs, true, env.MaxUploadBytes
	}
	if env.VAPIDParameter != "" || env.SlackParameter != "" || (env.SSO != nil && env.SSOSecretParameter != "") {
		rt.SSM = ssm.NewFromConfig(cfg)
	}
	// Single sign-on's links stay listable and removable with it off (SsoFunction's routes).
	c.SSOLinks = true
	if env.SSO != nil {
		sc := *env.SSO
		if env.SSOSecretParameter != "" {
			sec := &ssoSecret{client: rt.SSM, name: env.SSOSecretParameter}
			sc.LoadClientSecret = sec.load
		}
		c.SSO = &sc
	}
	if env.VAPIDParameter != "" {
		rt.vapid = &vapid{client: rt.SSM, prefix: env.VAPIDParameter}
		c.Push = &httpapi.PushConfig{
			PublicKey: func(ctx context.Context) (string, error) {
				k, err := rt.vapid.load(ctx, false)
				return k.PublicKey, err
			},
			Store: store, Rules: ask.PushRules{AllowLoopback: env.PushLoopback},
		}
	}
	if env.ActionKeyParameter != "" {
		if rt.SSM == nil {
			rt.SSM = ssm.NewFromConfig(cfg)
		}
		k := &actionKey{client: rt.SSM, name: env.ActionKeyParameter}
		c.ActionKey = k.load
	}
	rt.App = app.New(c)
	rt.Service, rt.Gate, rt.Uploads = rt.App.Service, rt.App.Gate, rt.App.Uploads
	if env.MailFrom != "" && env.PublicURL != "" && rt.App.Actions != nil {
		rt.Mailer = &mail.Notifier{
			Actions: rt.App.Actions, Addresses: store, Credentials: store, From: env.MailFrom,
			PublicURL: env.PublicURL, Logger: logger, Transport: &mail.SES{Client: sesv2.NewFromConfig(cfg)},
		}
	}
	if env.SlackParameter != "" {
		rt.slack = &slackApp{rt: rt}
		rt.App.API.Slack.Connected = true
	}
	if env.ConnectionsURL != "" {
		p, err := apigw.NewConnections(cfg, env.ConnectionsURL)
		if err != nil {
			return nil, err
		}
		rt.Poster = p
	}
	return rt, nil
}

// API is the HTTP API's route table (shared/httpapi), as every api-* function serves it behind
// API Gateway (they all run functions/api): whoami, snapshot, asks, reply, event tickets, uploads
// and files. API Gateway sends each function only its own route; each function's role allows only
// what that route needs.
// The event socket is not here: API Gateway's WebSocket API holds it (Sockets); Gateway serves
// its $default route in the reply API's function.
//
// With a Slack app (Env.SlackParameter), Slack's requests to /slack/interactivity and
// /slack/commands too (SlackAppFunction's routes), and the OAuth install's /slack/install and
// /slack/oauth/callback (SlackInstallFunction's).
//
// MCP OAuth's endpoints too (OAuthFunction's routes: /.well-known/oauth-* and /oauth/*), and
// single sign-on's pages (SsoFunction's /auth/oidc/*), which CloudFront sends to the HTTP API.
func (rt *Runtime) API() http.Handler {
	api := rt.App.API.Handler()
	if rt.slack == nil && rt.App.OAuth == nil && rt.App.SSO == nil {
		return api
	}
	var slackMux *http.ServeMux
	if rt.slack != nil {
		slackMux = http.NewServeMux()
		slackMux.Handle("/slack/", rt.slack)
		install := &slackInstall{rt: rt}
		slackMux.Handle(slack.PathInstall, install)
		slackMux.Handle(slack.PathOAuthCallback, install)
	}
	var authz, signOn http.Handler
	if rt.App.OAuth != nil {
		authz = rt.App.OAuth.Handler()
	}
	if rt.App.SSO != nil {
		signOn = rt.App.SSO.Handler()
	}
	// By prefix, not through a ServeMux, which would redirect the API's unclean paths
	// (`//api/v1/whoami`) that the API answers with its own 404 Problem. Every path under
	// MCP OAuth's two prefixes is the authorization server's answer (a preflight, an unknown
	// path), as locally.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case slackMux != nil && strings.HasPrefix(p, "/slack/"):
			slackMux.ServeHTTP(w, r)
		case authz != nil && (strings.HasPrefix(p, "/.well-known/") || strings.HasPrefix(p, "/oauth/")):
			authz.ServeHTTP(w, r)
		case signOn != nil && strings.HasPrefix(p, "/auth/"):
			// Single sign-on's pages (SsoFunction's /auth/oidc/start and /auth/oidc/callback);
			// without OidcIssuer they are the API's 404 Problem, as any unknown path.
			signOn.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// Sockets serves the WebSocket API's routes and the stream fan-out.
func (rt *Runtime) Sockets() *wsapi.Sockets { return rt.App.Sockets(rt.poster(), rt.Store) }

// poster is the @connections client, or one that says it is missing.
func (rt *Runtime) poster() wsapi.Poster {
	if rt.Poster != nil {
		return rt.Poster
	}
	return noPoster{}
}

type noPoster struct{}

var errNoPoster = errors.New("awsrt: LOOPBACK_CONNECTIONS_URL is not set: no @connections endpoint")

func (noPoster) Post(context.Context, string, []byte) error { return errNoPoster }
func (noPoster) Close(context.Context, string) error        { return errNoPoster }
