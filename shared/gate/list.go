package gate

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// WriteCredentials prints a space's credentials as `loopback token list` and `make tokens` show
// them: id, role, name, whose they are, the OAuth client an agent was connected for (its
// client_id; "-" for a pasted token's), created, last used, revoked (times in the reader's zone).
// Never a token: only hashes are stored.
func WriteCredentials(w io.Writer, creds []*ask.Credential) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tROLE\tNAME\tFOR\tCLIENT\tCREATED\tLAST USED\tREVOKED")
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Local().Format(time.RFC3339)
	}
	for _, c := range creds {
		client := c.Client
		if client == "" {
			client = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.Role, c.Actor.Name, c.Person.Name, client,
			when(&c.CreatedAt), when(c.LastUsedAt), when(c.RevokedAt))
	}
	return tw.Flush()
}
