package awsrt

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	slackapi "github.com/slack-go/slack"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/slack"
)

// Slack on AWS. The Slack app's secrets are SSM SecureString parameters under
// Env.SlackParameter: <prefix>/bot-token (xoxb-…) and <prefix>/signing-secret, put there by whoever
// deploys (docs/slack.md). Two functions use them, each only what it needs (template.yaml):
// SlackAppFunction, behind the HTTP API at /slack/interactivity and /slack/commands, reads both;
// the stream fan-out, which posts and updates the messages, reads the bot token only. Like the
// VAPID keys they are read on first use, never while a function loads.

// Names of the Slack parameters under Env.SlackParameter.
const (
	SlackBotTokenName      = "/bot-token"
	SlackSigningSecretName = "/signing-secret"
)

// slackApp builds the runtime's slack.Bot once its secrets are read.
type slackApp struct {
	rt *Runtime

	mu      sync.Mutex
	bot     *slack.Bot
	handler http.Handler
}

// load returns the bot, reading its token (and, with signing, the signing secret) once.
func (s *slackApp) load(ctx context.Context, signing bool) (*slack.Bot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt := s.rt
	prefix := rt.Env.SlackParameter
	if s.bot == nil {
		token, err := getParameter(ctx, rt.SSM, prefix+SlackBotTokenName, true)
		if isParameterNotFound(err) {
			return nil, ask.Errorf(httpapi.ERouteNotFound, "this deployment has no Slack bot token yet: put it in SSM as %s", prefix+SlackBotTokenName)
		} else if err != nil {
			return nil, fmt.Errorf("reading the Slack bot token: %w", err)
		}
		var opts []slackapi.Option
		if rt.Env.SlackAPIURL != "" {
			opts = append(opts, slackapi.OptionAPIURL(rt.Env.SlackAPIURL))
		}
		s.bot = &slack.Bot{
			Client: slackapi.New(token, opts...), WorkBeforeAck: true,
			Service: rt.Service, Store: rt.Store, Gate: rt.Gate, PublicURL: rt.Env.PublicURL, Logger: rt.Logger,
		}
	}
	if signing && s.bot.SigningSecret == "" {
		secret, err := getParameter(ctx, rt.SSM, prefix+SlackSigningSecretName, true)
		if isParameterNotFound(err) {
			return nil, ask.Errorf(httpapi.ERouteNotFound, "this deployment has no Slack signing secret yet: put it in SSM as %s", prefix+SlackSigningSecretName)
		} else if err != nil {
			return nil, fmt.Errorf("reading the Slack signing secret: %w", err)
		}
		s.bot.SigningSecret = secret
		s.handler = s.bot.Handler()
	}
	return s.bot, nil
}

// ServeHTTP serves Slack's requests (slack.Bot.Handler), once the secrets are read.
func (s *slackApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, err := s.load(r.Context(), true); err != nil {
		s.rt.Logger.ErrorContext(r.Context(), "slack: not set up", "err", err)
		httpapi.WriteError(w, r, err)
		return
	}
	s.handler.ServeHTTP(w, r)
}

// deliver puts a change in Slack (slack.Bot.Deliver).
func (s *slackApp) deliver(ctx context.Context, ch ask.Change) {
	b, err := s.load(ctx, false)
	if err != nil {
		s.rt.Logger.ErrorContext(ctx, "slack: not set up", "err", err)
		return
	}
	if err := b.Deliver(ctx, ch); err != nil {
		s.rt.Logger.WarnContext(ctx, "slack: delivering a change", "ask", ch.Ask.ID, "version", ch.Ask.Version, "err", err)
	}
}

// The OAuth install (SlackInstallFunction): the app's client id (<prefix>/client-id, a String)
// and client secret (<prefix>/client-secret, a SecureString) are read on first use; the bot token
// the install gets is written over <prefix>/bot-token, where the fan-out and SlackAppFunction
// read it (each once per instance: new instances use the new token).
const (
	SlackClientIDName     = "/client-id"
	SlackClientSecretName = "/client-secret"
)

// slackInstall serves slack.PathInstall and slack.PathOAuthCallback.
type slackInstall struct {
	rt *Runtime

	mu     sync.Mutex
	id     string
	secret string
}

func (s *slackInstall) load(ctx context.Context) (id, secret string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := s.rt.Env.SlackParameter
	if s.id == "" || s.secret == "" {
		id, err := getParameter(ctx, s.rt.SSM, prefix+SlackClientIDName, false)
		if err == nil {
			s.secret, err = getParameter(ctx, s.rt.SSM, prefix+SlackClientSecretName, true)
		}
		if isParameterNotFound(err) {
			return "", "", ask.Errorf(httpapi.ERouteNotFound, "this deployment has no Slack client id and secret yet: put them in SSM as %s and %s",
				prefix+SlackClientIDName, prefix+SlackClientSecretName)
		} else if err != nil {
			return "", "", fmt.Errorf("reading the Slack app's client id and secret: %w", err)
		}
		s.id = id
	}
	return s.id, s.secret, nil
}

func (s *slackInstall) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt := s.rt
	id, secret, err := s.load(r.Context())
	if err != nil {
		rt.Logger.ErrorContext(r.Context(), "slack: no install", "err", err)
		httpapi.WriteError(w, r, err)
		return
	}
	in := &slack.Installer{
		ClientID: id, ClientSecret: secret, Store: rt.Store, Gate: rt.Gate, Logger: rt.Logger,
		RedirectURL: strings.TrimRight(rt.App.PublicURL(r), "/") + slack.PathOAuthCallback,
		APIURL:      rt.Env.SlackAPIURL,
		Save: func(ctx context.Context, space, token string, _ *slackapi.OAuthV2Response) error {
			// The deployment's one bot token (one workspace per deployment).
			_, err := rt.SSM.PutParameter(ctx, &ssm.PutParameterInput{
				Name: aws.String(rt.Env.SlackParameter + SlackBotTokenName), Value: aws.String(token),
				Type: ssmtypes.ParameterTypeSecureString, Overwrite: aws.Bool(true),
				Description: aws.String("Loopback's Slack bot token, from the OAuth install by a person of " + space),
			})
			return err
		},
	}
	in.Handler().ServeHTTP(w, r)
}

// PutSlackSecrets writes the Slack app's bot token and signing secret under prefix (SecureStrings,
// replacing what is there): what whoever deploys does by hand, and what `loopback aws-local
// --slack-bot-token … --slack-signing-secret …` does for its emulator or account.
func PutSlackSecrets(ctx context.Context, client SSM, prefix, botToken, signingSecret string) error {
	for name, value := range map[string]string{prefix + SlackBotTokenName: botToken, prefix + SlackSigningSecretName: signingSecret} {
		if _, err := client.PutParameter(ctx, &ssm.PutParameterInput{
			Name: aws.String(name), Value: aws.String(value), Type: ssmtypes.ParameterTypeSecureString, Overwrite: aws.Bool(true),
			Description: aws.String("Loopback's Slack app (docs/slack.md)"),
		}); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}
