package gate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/sqlite"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

func open(t *testing.T) *sqlite.DB {
	t.Helper()
	db := sqlitetest.Open(t)
	return db
}

func issue(t *testing.T, db *sqlite.DB, role ask.Role) (string, *ask.Credential) {
	t.Helper()
	who := ask.Actor{ID: string(role) + ":x", Name: "x"}
	token, c, err := gate.Issue(context.Background(), db, ask.Credential{Space: "s", Role: role, Actor: who, Person: who})
	if err != nil {
		t.Fatal(err)
	}
	return token, c
}

// TestRoles: what Check and CheckPerson let through, by role and state.
func TestRoles(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	g := &gate.Gate{Credentials: db}
	owner, _ := issue(t, db, ask.RoleOwner)
	person, _ := issue(t, db, ask.RolePerson)
	agent, _ := issue(t, db, ask.RoleAgent)
	revoked, rc := issue(t, db, ask.RolePerson)
	if err := db.RevokeCredential(ctx, "s", rc.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token      string
		check, forPerson string // the error codes, "" for let in
	}{
		{"owner", owner, "", ""},
		{"person", person, "", ""},
		{"agent", agent, "", ask.EForbidden},
		{"revoked", revoked, ask.EUnauthorized, ask.EUnauthorized},
		{"unknown", "lb_nope", ask.EUnauthorized, ask.EUnauthorized},
		{"none", "", ask.EUnauthorized, ask.EUnauthorized},
	} {
		_, err := g.Check(ctx, tc.token)
		if ask.ErrorCode(err) != tc.check {
			t.Errorf("Check(%s) = %v, want %q", tc.name, err, tc.check)
		}
		_, err = g.CheckPerson(ctx, tc.token)
		if ask.ErrorCode(err) != tc.forPerson {
			t.Errorf("CheckPerson(%s) = %v, want %q", tc.name, err, tc.forPerson)
		}
	}
}

// TestLastUsed: the gate records use at most once per ask.LastUsedEvery.
func TestLastUsed(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	now := ask.Truncate(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	g := &gate.Gate{Credentials: db, Now: func() time.Time { return now }}
	token, c := issue(t, db, ask.RoleAgent)
	used := func() time.Time {
		got, err := db.CredentialByID(ctx, "s", c.ID)
		if err != nil || got.LastUsedAt == nil {
			t.Fatalf("last used: %+v %v", got, err)
		}
		return *got.LastUsedAt
	}
	g.Check(ctx, token)
	first := now
	if !used().Equal(first) {
		t.Fatalf("last used %v, want %v", used(), first)
	}
	now = now.Add(ask.LastUsedEvery - time.Second)
	g.Check(ctx, token)
	if !used().Equal(first) {
		t.Errorf("a use within a minute was written: %v", used())
	}
	now = now.Add(2 * time.Second)
	g.Check(ctx, token)
	if !used().Equal(now) {
		t.Errorf("a use after a minute was not written: %v, want %v", used(), now)
	}
}

// TestRevocations: a watcher hears of a revocation made elsewhere (in the store) within its
// interval, and stops watching when its holders are done.
func TestRevocations(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	r := &gate.Revocations{Credentials: db, Interval: 20 * time.Millisecond}
	_, c := issue(t, db, ask.RoleAgent)
	_, kept := issue(t, db, ask.RoleAgent)
	revoked, stop := r.Context(c)
	defer stop()
	other, stopOther := r.Context(c)
	defer stopOther()
	untouched, stopKept := r.Context(kept)
	defer stopKept()
	if err := db.RevokeCredential(ctx, "s", c.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, ctx := range []context.Context{revoked, other} {
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("a watcher did not hear of the revocation")
		}
	}
	select {
	case <-untouched.Done():
		t.Fatal("revoking one credential ended the watch of another")
	case <-time.After(100 * time.Millisecond):
	}
	var none *gate.Revocations
	if ctx, stop := none.Context(kept); ctx != nil {
		t.Error("a nil Revocations watches")
	} else {
		stop()
	}
}

// TestCountStart: an address may start gate.MaxStartsPerMinute of each kind a minute; the next is
// ETooMany with a Retry-After of at least a second, and another kind or another address is
// counted apart. Without a throttle or an address, nothing is counted.
func TestCountStart(t *testing.T) {
	starts := &limit.Failures{Max: gate.MaxStartsPerMinute, Window: time.Minute}
	from := func(addr string) context.Context { return gate.WithClientAddr(context.Background(), addr) }
	for i := range gate.MaxStartsPerMinute {
		if err := gate.CountStart(from("192.0.2.1"), starts, "passkey"); err != nil {
			t.Fatalf("start %d: %v", i+1, err)
		}
	}
	err := gate.CountStart(from("192.0.2.1"), starts, "passkey")
	var th *gate.Throttled
	if !errors.As(err, &th) || ask.ErrorCode(err) != ask.ETooMany || th.RetryAfter() < time.Second {
		t.Fatalf("start %d: %v", gate.MaxStartsPerMinute+1, err)
	}
	for _, c := range []struct {
		name string
		ctx  context.Context
		t    gate.Throttle
		kind string
	}{
		{"another kind", from("192.0.2.1"), starts, "sso"},
		{"another address", from("192.0.2.2"), starts, "passkey"},
		{"no address", context.Background(), starts, "passkey"},
		{"no throttle", from("192.0.2.1"), nil, "passkey"},
	} {
		if err := gate.CountStart(c.ctx, c.t, c.kind); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
