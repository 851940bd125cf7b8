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
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/blobs3"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/redact"
	"github.com/loopback-hq/loopback/shared/samtemplate"
	"github.com/loopback-hq/loopback/web"
)

// awsLocal runs the AWS deployment's own Lambda handlers on this machine (shared/awslocal): the
// routes, environment, stream mapping and schedule of template.yaml, with DynamoDB and S3 at
// AWS_ENDPOINT_URL, or on a moto_server it starts when none is given, or (--aws) in the account
// the standard AWS configuration names. It prints what serve prints; the credentials are kept
// in the table, their tokens in the data folder, as serve --store dynamodb keeps them.
func awsLocal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("aws-local", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	data := fs.String("data", defaultDataDir()+"-aws", "data folder: the owner's and the agent's tokens")
	tmplPath := fs.String("template", "template.yaml", "the SAM template whose functions run here")
	table := fs.String("table", envOr("LOOPBACK_TABLE", "loopback-local"), "the DynamoDB table (created when missing on an emulator)")
	bucket := fs.String("bucket", envOr("LOOPBACK_BUCKET", "loopback-local-uploads"), "the S3 bucket for uploaded images (created when missing on an emulator)")
	stack := fs.String("stack", "loopback-local", "the stack's name (AWS::StackName: it names the VAPID parameters in SSM)")
	useAWS := fs.Bool("aws", false, "use the AWS account of the standard configuration (no emulator); the table and bucket must exist unless --create")
	create := fs.Bool("create", false, "with --aws, create the table and bucket when missing")
	progress := fs.String("progress", "", "override the MCP function's LOOPBACK_PROGRESS (template.yaml: 15s)")
	maxWait := fs.String("max-wait", "", "override the MCP function's LOOPBACK_MAX_WAIT (template.yaml: 14m30s)")
	maxWaits := fs.String("max-waits", "", "override the MCP function's LOOPBACK_MAX_WAITS (default 5 waiting calls per credential, counted across instances)")
	quietMaxWait := fs.String("quiet-max-wait", "", "override the MCP function's LOOPBACK_QUIET_MAX_WAIT (default 50s: a call with no progress token)")
	claudeMaxWait := fs.String("claude-code-max-wait", "", "override the MCP function's LOOPBACK_CLAUDE_CODE_MAX_WAIT (default 4m30s)")
	slackBot := fs.String("slack-bot-token", os.Getenv("SLACK_BOT_TOKEN"), "Slack: the app's bot token (xoxb-…), kept in SSM as a deployment with Slack=on keeps it; with --slack-signing-secret")
	slackSecret := fs.String("slack-signing-secret", os.Getenv("SLACK_SIGNING_SECRET"), "Slack: the app's signing secret, kept in SSM beside the bot token; Slack's requests come to /slack/interactivity and /slack/commands")
	slackAPI := fs.String("slack-api-url", os.Getenv(SlackAPIURLEnv), "Slack's Web API base (default Slack's own; tests point it at a stand-in)")
	ssoOpts := ssoFlagSet(fs)
	readyFile := readyFileFlag(fs)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	// Single sign-on: the same --oidc-* flags (and environment) as serve's, passed to the
	// template's Oidc* parameters, for the space aws-local's owner signs in to.
	ssoCfg, err := ssoOpts.config(LocalSpace)
	if err != nil {
		return err
	}
	if (*slackBot == "") != (*slackSecret == "") {
		return errors.New("aws-local takes Slack's requests over HTTP only: give --slack-bot-token and --slack-signing-secret together")
	}
	logger := slog.New(redact.New(slog.NewTextHandler(stderr, nil)))
	tmpl, err := samtemplate.Load(*tmplPath)
	if err != nil {
		return fmt.Errorf("reading the template (--template): %w", err)
	}

	cfg, emulated, stop, err := awsLocalConfig(ctx, *useAWS, logger)
	if err != nil {
		return err
	}
	defer stop()
	db := dynamodb.NewFromConfig(cfg)
	if emulated || *create {
		if err := dynamo.EnsureTable(ctx, db, *table); err != nil {
			return err
		}
		if err := blobs3.EnsureBucket(ctx, blobs3.NewClient(cfg), *bucket); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	env := map[string]map[string]string{}
	mcp := tmplMCPFunction(tmpl)
	for name, v := range map[string]string{"LOOPBACK_PROGRESS": *progress, "LOOPBACK_MAX_WAIT": *maxWait, "LOOPBACK_MAX_WAITS": *maxWaits,
		"LOOPBACK_QUIET_MAX_WAIT": *quietMaxWait, "LOOPBACK_CLAUDE_CODE_MAX_WAIT": *claudeMaxWait} {
		if v != "" {
			if env[mcp] == nil {
				env[mcp] = map[string]string{}
			}
			env[mcp][name] = v
		}
	}
	params := map[string]string{"PublicUrl": base}
	if *slackBot != "" {
		// template.yaml's Slack=on, with the app's secrets where the deployment reads them.
		if err := awsrt.PutSlackSecrets(ctx, ssm.NewFromConfig(cfg), "/loopback/"+*stack+"/slack", *slackBot, *slackSecret); err != nil {
			ln.Close()
			return err
		}
		params["Slack"] = "on"
	}
	if ssoCfg != nil {
		// template.yaml's Oidc* parameters, and the client secret where SsoFunction reads it.
		if ssoCfg.ClientSecret != "" {
			if err := awsrt.PutSSOSecret(ctx, ssm.NewFromConfig(cfg), "/loopback/"+*stack+awsrt.SSOSecretName, ssoCfg.ClientSecret); err != nil {
				ln.Close()
				return err
			}
		}
		params["OidcIssuer"], params["OidcClientId"], params["OidcName"] = ssoCfg.Issuer, ssoCfg.ClientID, ssoCfg.Name
		params["OidcSpace"], params["OidcAllow"], params["OidcOwner"] = ssoCfg.Space, strings.Join(ssoCfg.Allow, ","), strings.Join(ssoCfg.Owners, ",")
	}
	d, err := awslocal.New(ctx, awslocal.Options{
		Template: tmpl, Config: cfg, Table: *table, Bucket: *bucket, StackName: *stack,
		// CloudFront's address, which links and the socket's Origin check name: here, this one.
		Parameters: params, Env: env, Logger: logger, SlackAPIURL: *slackAPI,
	})
	if err != nil {
		ln.Close()
		return err
	}
	defer d.Close()
	// awsrt.New made each function's logger the default (JSON, as Lambda's log lines); the
	// command's own lines stay text.
	slog.SetDefault(logger)

	if err := os.MkdirAll(*data, 0o700); err != nil {
		return fmt.Errorf("creating the data folder: %w", err)
	}
	if err := tightenDataDir(*data); err != nil {
		return err
	}
	a := &dataDir{db: dynamoStorage{dynamo.New(db, *table)}, owner: localOwner(), dir: *data}
	token, err := a.ownerCredential(ctx)
	if err != nil {
		return fmt.Errorf("setting up the owner's token: %w", err)
	}
	agentToken, err := a.agentCredential(ctx)
	if err != nil {
		return fmt.Errorf("setting up the agent's token: %w", err)
	}

	srv := &http.Server{Handler: d.Handler(web.Handler()), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	run, stopRun := context.WithCancel(ctx)
	defer stopRun()
	done := make(chan struct{})
	go func() { defer close(done); d.Run(run) }()
	printWelcome(stdout, base, token, agentToken, pluginMarketplace(*data))
	if ssoCfg != nil {
		name := ssoCfg.Name
		if name == "" {
			name = ssoCfg.Issuer
		}
		fmt.Fprintf(stdout, "Single sign-on (SsoFunction): the inbox offers \"Sign in with %s\" (%s). The provider must allow the redirect URI %s/auth/oidc/callback.\n\n",
			name, ssoCfg.Issuer, base)
	}
	unannounce, err := announce(*readyFile, listening(ln, base), nil)
	if err != nil {
		ln.Close()
		return err
	}
	defer unannounce()
	logger.Info("serving the AWS path", "addr", ln.Addr().String(), "template", *tmplPath, "table", *table, "bucket", *bucket, "functions", len(tmpl.Functions))

	err = serveUntil(ctx, srv, ln, logger, d.Shutdown, nil)
	d.Drain()
	stopRun()
	<-done
	for id, calls := range d.Calls {
		if m := calls.Missing(); len(m) > 0 {
			logger.Warn("IAM: actions used that template.yaml does not allow", "function", id, "actions", strings.Join(m, ", "))
		}
	}
	return err
}

// awsLocalConfig is where aws-local keeps things: the account (--aws), AWS_ENDPOINT_URL's
// emulator, or a moto_server started here and stopped by stop.
func awsLocalConfig(ctx context.Context, useAWS bool, logger *slog.Logger) (cfg aws.Config, emulated bool, stop func(), err error) {
	stop = func() {}
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	switch {
	case useAWS:
		if endpoint != "" {
			return cfg, false, stop, errors.New("--aws with AWS_ENDPOINT_URL set: unset one of them")
		}
		cfg, err = config.LoadDefaultConfig(ctx)
		if err == nil && cfg.Region == "" {
			err = errors.New("--aws needs a region: set AWS_REGION (such as us-east-1)")
		}
		return cfg, false, stop, err
	case endpoint != "":
		// An emulator: moto, whose requests must not interleave (awslocal.SerialClient).
		cfg, err = config.LoadDefaultConfig(ctx)
		cfg.HTTPClient = awslocal.SerialClient()
		if err == nil && cfg.Region == "" {
			cfg.Region = awslocal.MotoRegion
		}
		return cfg, true, stop, err
	}
	if _, err := exec.LookPath("moto_server"); err != nil {
		return cfg, false, stop, errors.New("no AWS_ENDPOINT_URL and no moto_server on PATH: install moto (pip install 'moto[server]==5.2.1', or make setup, which puts it in .venv/bin), point AWS_ENDPOINT_URL at an emulator, or pass --aws to use your AWS account")
	}
	m, err := awslocal.StartMoto()
	if err != nil {
		return cfg, false, stop, err
	}
	logger.Info("started moto_server (its data goes when aws-local stops)", "url", m.URL)
	return m.Config(), true, m.Close, nil
}

// tmplMCPFunction is the logical ID of the function behind the function URL.
func tmplMCPFunction(t *samtemplate.Template) string {
	for _, f := range t.Functions {
		if f.HasURL {
			return f.ID
		}
	}
	return ""
}

// localOwner is who the local owner credential names: this user.
func localOwner() ask.Actor {
	name := os.Getenv("USER")
	if name == "" {
		name = "owner"
	}
	return ask.Actor{ID: "owner", Name: name}
}
