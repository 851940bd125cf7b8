package gate_test

import (
	"context"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// The people of a space are the persons its live credentials belong to, once each; an agent's
// credential names no one new, a revoked one nobody, another space's nobody here.
func TestPeopleOfASpace(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	ada := ask.Actor{ID: "owner", Name: "Ada"}
	grace := ask.Actor{ID: "person:grace", Name: "Grace"}
	cy := ask.Actor{ID: "person:cy", Name: "Cy"}
	for _, c := range []ask.Credential{
		{Space: "s1", Role: ask.RoleOwner, Actor: ada, Person: ada},
		{Space: "s1", Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent:claude"}, Person: ada},
		{Space: "s1", Role: ask.RolePerson, Actor: grace, Person: grace},
		{Space: "s2", Role: ask.RolePerson, Actor: ask.Actor{ID: "person:eve"}, Person: ask.Actor{ID: "person:eve"}},
	} {
		if _, _, err := gate.Issue(ctx, db, c); err != nil {
			t.Fatal(err)
		}
	}
	_, revoked, err := gate.Issue(ctx, db, ask.Credential{Space: "s1", Role: ask.RolePerson, Actor: cy, Person: cy})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeCredential(ctx, "s1", revoked.ID, revoked.CreatedAt); err != nil {
		t.Fatal(err)
	}
	people, err := gate.People(ctx, db, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(people) != 2 || people[0] != ada || people[1] != grace {
		t.Fatalf("people of s1 = %+v, want Ada and Grace", people)
	}
	to := ask.Recipients(&ask.Ask{RaisedBy: &ada}, people)
	if len(to) != 1 || to[0] != grace {
		t.Fatalf("an escalation of Ada's agent's ask reaches %+v, want Grace", to)
	}
}
