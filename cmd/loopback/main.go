// Command loopback runs Loopback on one machine: SQLite in a data folder, the API, MCP, the event
// socket and the inbox, all on one port. No AWS account needed.
//
//	loopback serve [--addr 127.0.0.1:8080] [--data DIR]
//	loopback aws-local [--addr 127.0.0.1:8080] [--data DIR] [--template template.yaml] [--aws]
//	loopback token create [--person] --name NAME [--data DIR]
//	loopback token list [--data DIR]
//	loopback token revoke ID [--data DIR]
//	loopback token rotate [--data DIR]
//	loopback hook [--client claude-code|codex|cursor] [--timeout SECONDS]
//	loopback version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/loopback-hq/loopback/shared/buildinfo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsage) && !errors.Is(err, errHookFailed) {
			fmt.Fprintln(os.Stderr, "loopback:", err)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

const usage = `Loopback: agents ask, a person answers, the agent's call returns with the reply.

Usage:
  loopback serve [--addr 127.0.0.1:8080] [--data DIR]   run Loopback locally
  loopback aws-local [--addr 127.0.0.1:8080] [--template template.yaml]
                                                         the AWS deployment's own Lambdas on this machine,
                                                         on moto (AWS_ENDPOINT_URL, or started here) or --aws
  loopback token create --name NAME [--data DIR]         an agent's credential (MCP only), printed once
  loopback token create --person --name NAME             a teammate's credential (inbox and replies)
                                                         (token commands take --store/--table like serve)
  loopback token list [--data DIR]                       credentials: role, name, created, last used
  loopback token revoke ID [--data DIR]                  revoke a credential; what it opened ends too
  loopback token rotate [--data DIR]                     a new owner token; the old one is revoked
  loopback hook [--client claude-code|codex|cursor]      a client's permission hook: reads its JSON on stdin,
                                                         prints the person's decision (LOOPBACK_URL and
                                                         LOOPBACK_AGENT_TOKEN); never allows on its own
  loopback slack manifest [--url PUBLIC_URL]             the Slack app manifest to create your own app from
                                                         (Socket Mode without --url); see docs/slack.md
  loopback version                                       the contract revision and build

Environment:
  LOOPBACK_TOKEN   the owner's token, at least 32 characters; when unset, one is generated on first
                   run and kept in DIR. Changing it retires the old one.
  SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_SIGNING_SECRET
                   serve: answer from Slack (--slack-bot-token, --slack-app-token, --slack-signing-secret)
  LOOPBACK_URL, LOOPBACK_AGENT_TOKEN
                   loopback hook: where Loopback is, and an agent's token (never a person's)
`

// run is main without the process: the end-to-end tests call it with their own context and output.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr, nil)
	case "aws-local":
		return awsLocal(ctx, args[1:], stdout, stderr)
	case "token":
		return token(ctx, args[1:], stdout, stderr)
	case "hook":
		return hook(ctx, args[1:], os.Stdin, stdout, stderr)
	case "slack":
		return slackCmd(args[1:], stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "loopback revision %d build %s\n", buildinfo.Revision, buildinfo.Build)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "unknown command %q\n\n%s", args[0], usage)
	return errUsage
}
