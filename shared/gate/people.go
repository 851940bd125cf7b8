package gate

import (
	"context"

	"github.com/loopback-hq/loopback/shared/ask"
)

// People are the people of a space: whom each live person's credential (owner and teammates)
// belongs to, once each, oldest first (ask.People). A delivery channel that hears of an escalation
// (ask.EscalationFor) sends it to ask.Recipients(the ask, People(...)): everyone but the person
// whose agent asked.
func People(ctx context.Context, creds ask.CredentialStore, space string) ([]ask.Actor, error) {
	list, err := creds.Credentials(ctx, space)
	if err != nil {
		return nil, err
	}
	return ask.People(list), nil
}
