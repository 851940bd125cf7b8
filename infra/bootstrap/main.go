// Command bootstrap manages a deployed stack's credentials, in its DynamoDB table, from a laptop
// with AWS credentials: the first ones of a new space, then teammates and more agents, listing
// and revoking. Tokens are shown once and stored only as hashes. See docs/trust.md.
//
//	go run ./infra/bootstrap --table TABLE --name you [--url INBOX_URL] [--mcp MCP_URL]   a new space: owner + agent
//	go run ./infra/bootstrap --table TABLE --space ID --person --name ada                  a teammate
//	go run ./infra/bootstrap --table TABLE --space ID --agent --name ci [--mcp MCP_URL]    another agent
//	go run ./infra/bootstrap --table TABLE --space ID --list
//	go run ./infra/bootstrap --table TABLE --space ID --revoke CRED_ID
//
// It uses the standard AWS configuration (AWS_PROFILE, AWS_REGION, …); the Makefile's bootstrap,
// teammate, agent-token, tokens and revoke targets fill the flags in from the stack's outputs.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/gate"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bootstrap:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  bootstrap --table TABLE --name NAME [--space ID] [--url INBOX_URL] [--mcp MCP_URL]   a new space: owner + agent
  bootstrap --table TABLE --space ID --person --name NAME                                a teammate
  bootstrap --table TABLE --space ID --agent --name NAME [--mcp MCP_URL]                 another agent
  bootstrap --table TABLE --space ID --list
  bootstrap --table TABLE --space ID --revoke CRED_ID`

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bootstrap", flag.ContinueOnError)
	table := fs.String("table", "", "the stack's DynamoDB table (output AskTableName)")
	name := fs.String("name", "", "who the credential is for, such as ada")
	space := fs.String("space", "", "the space's id (a new space: default a new random one)")
	inbox := fs.String("url", "", "the inbox's URL (output InboxUrl), to print a sign-in link")
	mcp := fs.String("mcp", "", "the MCP URL (output McpUrl), to print the agent lines")
	person := fs.Bool("person", false, "a teammate's credential in --space")
	agent := fs.Bool("agent", false, "another agent's credential in --space")
	list := fs.Bool("list", false, "list the credentials of --space")
	revoke := fs.String("revoke", "", "revoke this credential of --space")
	vapid := fs.String("vapid", "", "the SSM prefix of Web Push's VAPID key pair (output VapidParameter): made if missing")
	actionKey := fs.String("action-key", "", "the SSM parameter of the action links' signing key (output ActionKeyParameter): made if missing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *table == "" {
		return fmt.Errorf("--table is required\n%s", usage)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("loading the AWS configuration: %w", err)
	}
	store := dynamo.New(dynamodb.NewFromConfig(cfg), *table)
	if *vapid != "" {
		if _, created, err := awsrt.EnsureVAPID(ctx, ssm.NewFromConfig(cfg), *vapid); err != nil {
			return fmt.Errorf("making the VAPID keys for Web Push: %w", err)
		} else if created {
			fmt.Fprintf(out, "Made the deployment's Web Push (VAPID) key pair: %s/public and %s/private in SSM.\n\n", *vapid, *vapid)
		}
	}
	if *actionKey != "" {
		if _, created, err := awsrt.EnsureActionKey(ctx, ssm.NewFromConfig(cfg), *actionKey); err != nil {
			return fmt.Errorf("making the action links' key: %w", err)
		} else if created {
			fmt.Fprintf(out, "Made the deployment's key for action links (email, notifications): %s in SSM.\n\n", *actionKey)
		}
	}
	needSpace := func() error {
		if *space == "" {
			return fmt.Errorf("--space is required (bootstrap printed it; `make tokens` shows it)\n%s", usage)
		}
		return nil
	}
	switch {
	case *list:
		if err := needSpace(); err != nil {
			return err
		}
		return listCredentials(ctx, store, *space, out)
	case *revoke != "":
		if err := needSpace(); err != nil {
			return err
		}
		svc := ask.NewService(store)
		svc.Leases = store
		if err := svc.Revoke(ctx, store, store, *space, *revoke); err != nil {
			return fmt.Errorf("%s", ask.ErrorMessage(err))
		}
		// An agent connected with MCP OAuth: its tokens go too (the gate already refuses them,
		// since it reads the credential on every request; a refresh would find it revoked).
		for _, kind := range []ask.OAuthTokenKind{ask.AccessToken, ask.RefreshToken} {
			if err := store.DeleteOAuthTokens(ctx, *space, *revoke, kind); err != nil {
				return fmt.Errorf("revoked %s, but deleting its OAuth tokens failed (they are refused all the same): %w", *revoke, err)
			}
		}
		fmt.Fprintf(out, "Revoked %s. Its sockets are disconnected and its waiting calls end within seconds; its tickets, tasks and OAuth tokens are void.\n", *revoke)
		return nil
	}
	if *name == "" {
		return fmt.Errorf("--name is required\n%s", usage)
	}
	switch {
	case *person:
		if err := needSpace(); err != nil {
			return err
		}
		token, cred, err := awsrt.AddPerson(ctx, store, *space, *name)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Created %s for %s, a person of space %s (signs in to the inbox and answers). Hand the token to %s alone; it is shown only this once:\n\n  %s\n\n", cred.ID, *name, *space, *name, token)
		if u := strings.TrimRight(*inbox, "/"); u != "" {
			fmt.Fprintf(out, "Their sign-in link:  %s/#token=%s\n", u, token)
		}
		return nil
	case *agent:
		if err := needSpace(); err != nil {
			return err
		}
		token, cred, err := awsrt.AddAgent(ctx, store, *space, *name)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Created %s for the agent %s in space %s (MCP only; it can ask, never answer). The token is shown only this once:\n\n  %s\n\n", cred.ID, *name, *space, token)
		printAgentLines(out, *mcp, token)
		return nil
	}
	if *space == "" {
		*space = "sp_" + ask.NewID()[:16]
	}
	token, cred, err := awsrt.Bootstrap(ctx, store, *space, *name)
	if err != nil {
		return err
	}
	agentToken, agentCred, err := awsrt.AddAgent(ctx, store, *space, awsrt.DefaultAgentName)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Created space %s: %s, its owner %s, and %s, an agent credential. Tokens are shown only this once.\n\n", *space, cred.ID, *name, agentCred.ID)
	fmt.Fprintf(out, "Your token (a person's: keep it to yourself, and out of agents' reach):\n\n  %s\n\n", token)
	if u := strings.TrimRight(*inbox, "/"); u != "" {
		fmt.Fprintf(out, "Inbox:  %s/#token=%s\n\n", u, token)
	}
	fmt.Fprintf(out, "For your agents (an agent token: it can ask you, never answer for you):\n\n  %s\n\n", agentToken)
	printAgentLines(out, *mcp, agentToken)
	fmt.Fprintf(out, "A teammate: make teammate SPACE=%s NAME=their-name. Another agent: make agent-token SPACE=%s NAME=laptop.\n", *space, *space)
	return nil
}

// printAgentLines prints the lines that add the MCP server to Claude Code, Cursor and VS Code
// with an agent's token, as `loopback serve` does.
func printAgentLines(out io.Writer, mcp, token string) {
	if mcp == "" {
		return
	}
	fmt.Fprintf(out, `Or with the URL alone (MCP OAuth): the agent's client opens your browser and you approve it
in the inbox (docs/design/oauth.md):
  claude mcp add --transport http loopback %[1]s

Add it to Claude Code:
  claude mcp add --transport http loopback %[1]s --header "Authorization: Bearer %[2]s"

Add it to Cursor (~/.cursor/mcp.json, under "mcpServers"):
  "loopback": {"url": "%[1]s", "headers": {"Authorization": "Bearer %[2]s"}}

Add it to VS Code (.vscode/mcp.json, under "servers"):
  "loopback": {"type": "http", "url": "%[1]s", "headers": {"Authorization": "Bearer %[2]s"}}

`, mcp, token)
}

func listCredentials(ctx context.Context, store ask.CredentialStore, space string, out io.Writer) error {
	creds, err := store.Credentials(ctx, space)
	if err != nil {
		return err
	}
	return gate.WriteCredentials(out, creds)
}
