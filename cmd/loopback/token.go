package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
	name := fs.String("name", "", "who the credential is for, such as claude-code@laptop or ada (create)")
	person := fs.Bool("person", false, "create a teammate's credential: a person who signs in to the inbox and answers (create)")
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
	a, _, err := openDataDir(ctx, storageConfig{kind: *store, dir: *data, table: *table})
	if err != nil {
		return err
	}
	defer a.db.Close()

	switch args[0] {
	case "create":
		n := strings.TrimSpace(*name)
		if n == "" {
			fmt.Fprintln(stderr, "token create needs --name: who the credential is for")
			return errUsage
		}
		if err := ask.CheckName(n); err != nil {
			return fmt.Errorf("--name: %s", ask.ErrorMessage(err))
		}
		c := ask.Credential{Space: LocalSpace, Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent:" + n, Name: n}, Person: a.owner}
		what := "an agent's credential: it may use /mcp only, and never answer"
		if *person {
			who := ask.Actor{ID: "person:" + n, Name: n}
			c = ask.Credential{Space: LocalSpace, Role: ask.RolePerson, Actor: who, Person: who}
			what = "a person's credential: it signs in to the inbox and answers; hand it to " + n + " alone"
		}
		t, stored, err := gate.Issue(ctx, a.db, c)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Created %s for %s (%s). The token is shown only this once:\n\n  %s\n", stored.ID, n, what, t)
		return nil
	case "list":
		creds, err := a.db.Credentials(ctx, LocalSpace)
		if err != nil {
			return err
		}
		return gate.WriteCredentials(stdout, creds)
	case "revoke":
		if len(positional) != 1 {
			fmt.Fprintln(stderr, "token revoke needs the credential's ID (see token list)")
			return errUsage
		}
		svc := ask.NewService(a.db)
		svc.Leases = a.db
		if err := svc.Revoke(ctx, a.db, a.db, LocalSpace, positional[0]); err != nil {
			return fmt.Errorf("%s", ask.ErrorMessage(err))
		}
		if st := oauthStore(a.db); st != nil {
			// The gate refuses them already (it reads the credential); deleted, a refresh token
			// is dead in the store too.
			for _, kind := range []ask.OAuthTokenKind{ask.AccessToken, ask.RefreshToken} {
				if err := st.DeleteOAuthTokens(ctx, LocalSpace, positional[0], kind); err != nil {
					return err
				}
			}
		}
		fmt.Fprintf(stdout, "Revoked %s. Its sockets and waiting calls end within seconds; its tickets and tasks are void.\n", positional[0])
		return nil
	case "rotate":
		t, err := a.rotateOwner(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Rotated the owner's token: the old one is revoked, and the new one kept in %s.\nSign in to the inbox again with /#token=%s (loopback serve prints the whole link).\n",
			filepath.Join(*data, ownerTokenFile), t)
		return nil
	}
	fmt.Fprintf(stderr, "unknown token command %q\n\n%s", args[0], usage)
	return errUsage
}
