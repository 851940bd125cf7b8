package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	slackapi "github.com/slack-go/slack"

	"github.com/loopback-hq/loopback/shared/app"
	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/slack"
)

// slackFlags are serve's Slack settings (docs/slack.md): the bot token posts, the app-level
// token opens Socket Mode (no public address needed), the signing secret checks Slack's HTTP
// requests where Slack can reach this Loopback.
type slackFlags struct {
	botToken, appToken, secret, apiURL *string
}

// SlackAPIURLEnv points the Slack client at another Web API (the tests' stand-in).
const SlackAPIURLEnv = "LOOPBACK_SLACK_API_URL"

func slackFlagSet(fs *flag.FlagSet) slackFlags {
	return slackFlags{
		botToken: fs.String("slack-bot-token", os.Getenv("SLACK_BOT_TOKEN"), "Slack: the app's bot token (xoxb-…); with it, asks go to Slack (see `loopback slack manifest`)"),
		appToken: fs.String("slack-app-token", os.Getenv("SLACK_APP_TOKEN"), "Slack: the app-level token (xapp-…, connections:write) for Socket Mode: answers from Slack with no public address"),
		secret:   fs.String("slack-signing-secret", os.Getenv("SLACK_SIGNING_SECRET"), "Slack: the app's signing secret, to take interactivity over HTTP at /slack/interactivity (when Slack can reach --public-url)"),
		apiURL:   fs.String("slack-api-url", os.Getenv(SlackAPIURLEnv), "Slack's Web API base (default Slack's own; tests point it at a stand-in)"),
	}
}

// config is the wiring's Slack: settings always where the store keeps them, the bot with a
// token.
func (f slackFlags) config(store ask.SlackStore) (*app.Slack, *slackapi.Client, error) {
	cfg := &app.Slack{Store: store}
	if *f.botToken == "" {
		if *f.appToken != "" || *f.secret != "" {
			return nil, nil, errors.New("--slack-app-token and --slack-signing-secret need --slack-bot-token too")
		}
		return cfg, nil, nil
	}
	opts := []slackapi.Option{}
	if *f.apiURL != "" {
		opts = append(opts, slackapi.OptionAPIURL(*f.apiURL))
	}
	if *f.appToken != "" {
		opts = append(opts, slackapi.OptionAppLevelToken(*f.appToken))
	}
	client := slackapi.New(*f.botToken, opts...)
	cfg.Bot = &slack.Bot{Client: client, SigningSecret: *f.secret}
	return cfg, client, nil
}

// start runs the bot's delivery, and Socket Mode when there is an app-level token, until the
// returned stop, which also waits for the work clicks started (before the database closes).
func (f slackFlags) start(ctx context.Context, lb *app.App, client *slackapi.Client, logger *slog.Logger) (stop func()) {
	if lb.Slack == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	lb.Slack.Start(ctx)
	if *f.appToken != "" {
		go func() {
			if err := lb.Slack.RunSocketMode(ctx, client); err != nil {
				logger.Warn("slack: socket mode ended", "err", err)
			}
		}()
	}
	logger.Info("slack: on", "socket_mode", *f.appToken != "", "http", *f.secret != "")
	return func() {
		cancel()
		lb.Slack.Wait()
	}
}

// slackCmd: loopback slack manifest [--name NAME] [--url PUBLIC_URL].
func slackCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "manifest" {
		fmt.Fprintln(stderr, "usage: loopback slack manifest [--name NAME] [--url PUBLIC_URL]")
		return errUsage
	}
	fs := flag.NewFlagSet("slack manifest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "Loopback", "the app's name in Slack")
	url := fs.String("url", "", "the deployment's public address, for an app Slack calls over HTTP (AWS); empty: Socket Mode (local)")
	if err := fs.Parse(args[1:]); err != nil {
		return errUsage
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(slack.Manifest(*name, *url))
}
