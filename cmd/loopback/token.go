package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// token manages the local space's credentials: create one per agent so each can be revoked alone.
func token(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	fs := flag.NewFlagSet("token "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", defaultDataDir(), "data folder")
	name := fs.String("name", "", "who the credential is for, such as claude-code@laptop (create)")
	store := fs.String("store", envOr("LOOPBACK_STORE", "sqlite"), "where credentials are kept: sqlite or dynamodb, as for serve")
	table := fs.String("table", os.Getenv("LOOPBACK_TABLE"), "the DynamoDB table, with --store dynamodb")
	// Accept the credential's ID before or after the flags: `token revoke ID --data DIR`.
	rest, positional := args[1:], []string(nil)
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		positional, rest = rest[:1], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return errUsage
	}
	positional = append(positional, fs.Args()...)
	a, _, err := openAppOn(ctx, storageConfig{kind: *store, dir: *data, table: *table})
	if err != nil {
		return err
	}
	defer a.db.Close()

	switch args[0] {
	case "create":
		if *name == "" {
			fmt.Fprintln(stderr, "token create needs --name: who the credential is for")
			return errUsage
		}
		t, c, err := gate.Issue(ctx, a.db, ask.Credential{
			Space: LocalSpace, Role: ask.RoleAgent,
			Actor: ask.Actor{ID: "agent:" + *name, Name: *name}, Person: a.owner,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Created %s for %s. The token is shown only this once:\n\n  %s\n", c.ID, *name, t)
		return nil
	case "list":
		creds, err := a.db.Credentials(ctx, LocalSpace)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tROLE\tFOR\tCREATED\tREVOKED")
		for _, c := range creds {
			revoked := "-"
			if c.RevokedAt != nil {
				revoked = c.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.Role, c.Actor.Name, c.CreatedAt.Format(time.RFC3339), revoked)
		}
		return tw.Flush()
	case "revoke":
		if len(positional) != 1 {
			fmt.Fprintln(stderr, "token revoke needs the credential's ID (see token list)")
			return errUsage
		}
		if err := a.db.RevokeCredential(ctx, LocalSpace, positional[0], ask.Truncate(time.Now())); err != nil {
			return fmt.Errorf("%s", ask.ErrorMessage(err))
		}
		fmt.Fprintf(stdout, "Revoked %s.\n", positional[0])
		return nil
	}
	fmt.Fprintf(stderr, "unknown token command %q\n\n%s", args[0], usage)
	return errUsage
}
