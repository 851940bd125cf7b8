// Command bootstrap creates the first credential of a deployed stack: an owner token for a space,
// stored hashed in the stack's table, printed once with the inbox URL and a ready `claude mcp
// add` line, as `loopback serve` prints locally.
//
//	go run ./infra/bootstrap --table TABLE --name you [--space NAME] [--url https://dxxx.cloudfront.net] [--mcp URL]
//
// It uses the standard AWS configuration (AWS_PROFILE, AWS_REGION, …); `make bootstrap` fills
// the flags in from the stack's outputs.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/dynamo"
)

func main() {
	table := flag.String("table", "", "the stack's DynamoDB table (output AskTableName)")
	name := flag.String("name", "", "who the owner is, such as ada")
	space := flag.String("space", "", "the space's id (default: a new random one)")
	inbox := flag.String("url", "", "the inbox's URL (output InboxUrl), to print a sign-in link")
	mcp := flag.String("mcp", "", "the MCP URL (output McpUrl), to print a claude mcp add line")
	flag.Parse()
	if *table == "" || *name == "" {
		fmt.Fprintln(os.Stderr, "usage: bootstrap --table TABLE --name NAME [--space ID] [--url INBOX_URL] [--mcp MCP_URL]")
		os.Exit(2)
	}
	if *space == "" {
		*space = "sp_" + ask.NewID()[:16]
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bootstrap: loading the AWS configuration:", err)
		os.Exit(1)
	}
	store := dynamo.New(dynamodb.NewFromConfig(cfg), *table)
	token, cred, err := awsrt.Bootstrap(ctx, store, *space, *name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bootstrap:", err)
		os.Exit(1)
	}
	fmt.Printf("Created %s, owner of space %s, for %s. The token is shown only this once:\n\n  %s\n\n", cred.ID, *space, *name, token)
	if u := strings.TrimRight(*inbox, "/"); u != "" {
		fmt.Printf("Inbox:  %s/#token=%s\n", u, token)
	}
	if m := *mcp; m != "" {
		fmt.Printf("Add it to Claude Code:\n  claude mcp add --transport http loopback %s --header \"Authorization: Bearer %s\"\n", m, token)
	}
}
