package gate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// TestConnect: only a person connects an agent; what results is an agent of their space, owned by
// them, named after the client, whose own token is never handed out.
func TestConnect(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	now := ask.Truncate(time.Now())
	_, owner := issue(t, db, ask.RoleOwner)
	_, agent := issue(t, db, ask.RoleAgent)
	if _, err := gate.Connect(ctx, db, agent, "client_x", "X", now); ask.ErrorCode(err) != ask.EForbidden {
		t.Errorf("an agent connecting an agent: %v, want forbidden", err)
	}
	if _, err := gate.Connect(ctx, db, nil, "client_x", "X", now); ask.ErrorCode(err) != ask.EUnauthorized {
		t.Errorf("nobody connecting: %v", err)
	}
	c, err := gate.Connect(ctx, db, owner, "https://claude.ai/oauth/claude-code-client-metadata", "  Claude\n Code ", now)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := db.CredentialByID(ctx, "s", c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Role != ask.RoleAgent || stored.Space != "s" || stored.Person != owner.Person || stored.Actor.Name != "Claude Code" ||
		stored.Client != "https://claude.ai/oauth/claude-code-client-metadata" || stored.Actor.ID == owner.Actor.ID {
		t.Errorf("connected credential %+v", stored)
	}
	if stored.ForPerson() == nil {
		t.Error("a connected agent may act as a person")
	}
	if name := gate.ClientName("", "client_abc"); name != "client_abc" {
		t.Errorf("a nameless client is called %q, want its id", name)
	}
	if name := gate.ClientName(strings.Repeat("é", 200), "x"); len([]rune(name)) != gate.MaxClientNameRunes {
		t.Errorf("a long name is %d runes", len([]rune(name)))
	}
}

// TestConnectedAgents: the owner sees and revokes every agent of the space; a teammate their own,
// and another's agent is not found to them; nobody lists persons' credentials.
func TestConnectedAgents(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	now := ask.Truncate(time.Now())
	_, owner := issue(t, db, ask.RoleOwner)
	_, mate := issue(t, db, ask.RolePerson)
	ownersAgent, err := gate.Connect(ctx, db, owner, "client_a", "A", now)
	if err != nil {
		t.Fatal(err)
	}
	matesAgent, err := gate.Connect(ctx, db, mate, "client_b", "B", now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ids := func(by *ask.Credential) string {
		list, err := gate.ConnectedAgents(ctx, db, by)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range list {
			out = append(out, c.Actor.Name)
		}
		return strings.Join(out, ",")
	}
	if got := ids(owner); got != "A,B" {
		t.Errorf("the owner sees %q, want A,B", got)
	}
	if got := ids(mate); got != "B" {
		t.Errorf("the teammate sees %q, want B", got)
	}
	if _, err := gate.CheckDisconnect(ctx, db, mate, ownersAgent.ID); ask.ErrorCode(err) != ask.ENotFound {
		t.Errorf("a teammate revoking the owner's agent: %v, want not found", err)
	}
	if _, err := gate.CheckDisconnect(ctx, db, mate, owner.ID); ask.ErrorCode(err) != ask.ENotFound {
		t.Errorf("a teammate revoking the owner's own credential: %v", err)
	}
	if _, err := gate.CheckDisconnect(ctx, db, owner, mate.ID); ask.ErrorCode(err) != ask.ENotFound {
		t.Errorf("revoking a person through Connected agents: %v, want not found", err)
	}
	if _, err := gate.CheckDisconnect(ctx, db, mate, matesAgent.ID); err != nil {
		t.Errorf("a teammate revoking their own agent: %v", err)
	}
	if _, err := gate.CheckDisconnect(ctx, db, owner, matesAgent.ID); err != nil {
		t.Errorf("the owner revoking a teammate's agent: %v", err)
	}
	if _, err := gate.ConnectedAgents(ctx, db, ownersAgent); ask.ErrorCode(err) != ask.EForbidden {
		t.Errorf("an agent listing agents: %v", err)
	}
}
