package awsrt

import (
	"context"
	"errors"
	"fmt"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// A deployed stack's credentials are made from a laptop with the stack's table (infra/bootstrap,
// `make bootstrap`): the owner's for a new space, and beside it one agent credential, whose token
// is the one printed for agents; then teammates (person credentials) and more agents. Every
// token is shown once; only hashes are stored. See docs/trust.md.

// DefaultAgentName names the agent credential a new space starts with.
const DefaultAgentName = "agent"

// Bootstrap creates an owner credential for a new space and returns its token, which is shown
// once and never stored (only its hash is).
func Bootstrap(ctx context.Context, store ask.CredentialStore, space, name string) (string, *ask.Credential, error) {
	if space == "" || name == "" {
		return "", nil, fmt.Errorf("awsrt: bootstrap needs a space and a name")
	}
	if err := ask.CheckName(name); err != nil {
		return "", nil, err
	}
	owner := ask.Actor{ID: "owner:" + name, Name: name}
	return gate.Issue(ctx, store, ask.Credential{Space: space, Role: ask.RoleOwner, Actor: owner, Person: owner})
}

// AddPerson creates a teammate's credential in a space: a person who signs in and answers.
func AddPerson(ctx context.Context, store ask.CredentialStore, space, name string) (string, *ask.Credential, error) {
	if space == "" || name == "" {
		return "", nil, fmt.Errorf("awsrt: a teammate needs a space and a name")
	}
	if err := ask.CheckName(name); err != nil {
		return "", nil, err
	}
	who := ask.Actor{ID: "person:" + name, Name: name}
	return gate.Issue(ctx, store, ask.Credential{Space: space, Role: ask.RolePerson, Actor: who, Person: who})
}

// AddAgent creates an agent credential in a space, on behalf of the space's owner (its asks are
// raised by them): it opens /mcp only.
func AddAgent(ctx context.Context, store ask.CredentialStore, space, name string) (string, *ask.Credential, error) {
	if space == "" || name == "" {
		return "", nil, fmt.Errorf("awsrt: an agent credential needs a space and a name")
	}
	if err := ask.CheckName(name); err != nil {
		return "", nil, err
	}
	owner, err := Owner(ctx, store, space)
	if err != nil {
		return "", nil, err
	}
	return gate.Issue(ctx, store, ask.Credential{
		Space: space, Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent:" + name, Name: name}, Person: owner,
	})
}

// Owner is the person holding a space's live owner credential.
func Owner(ctx context.Context, store ask.CredentialStore, space string) (ask.Actor, error) {
	creds, err := store.Credentials(ctx, space)
	if err != nil {
		return ask.Actor{}, err
	}
	for _, c := range creds {
		if c.Role == ask.RoleOwner && c.Live() {
			return c.Actor, nil
		}
	}
	return ask.Actor{}, errors.New("this space has no live owner credential: bootstrap it first")
}
