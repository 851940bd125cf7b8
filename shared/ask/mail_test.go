package ask_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

func TestCheckMailAddress(t *testing.T) {
	for in, want := range map[string]string{
		"ada@example.com": "ada@example.com", " ada@example.com ": "ada@example.com", "": "",
		"ada@localhost": "ada@localhost",
	} {
		if got, err := ask.CheckMailAddress(in); err != nil || got != want {
			t.Errorf("CheckMailAddress(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"ada", "Ada <ada@example.com>", "ada@example.com\r\nBcc: eve@example.com", "ada@example",
		"@example.com", strings.Repeat("a", 250) + "@example.com", "a@b@example.com"} {
		if _, err := ask.CheckMailAddress(in); ask.ErrorCode(err) != ask.EMailInvalid {
			t.Errorf("CheckMailAddress(%q): %v, want %s", in, err, ask.EMailInvalid)
		}
	}
}

// The owner whose space it is gets the notice; a teammate, a revoked owner and an agent do not.
func TestMailRecipients(t *testing.T) {
	now := time.Now()
	creds := []*ask.Credential{
		{ID: "c1", Role: ask.RoleOwner, Person: ask.Actor{ID: "p-ada"}},
		{ID: "c2", Role: ask.RolePerson, Person: ask.Actor{ID: "p-bob"}},
		{ID: "c3", Role: ask.RoleOwner, Person: ask.Actor{ID: "p-old"}, RevokedAt: &now},
		{ID: "c4", Role: ask.RoleAgent, Actor: ask.Actor{ID: "a-1"}, Person: ask.Actor{ID: "p-ada"}},
	}
	addrs := []*ask.MailAddress{{PersonID: "p-ada", Email: "ada@example.com"}, {PersonID: "p-bob", Email: "bob@example.com"},
		{PersonID: "p-old", Email: "old@example.com"}, {PersonID: "a-1", Email: "agent@example.com"}}
	got := ask.MailRecipients(creds, addrs)
	if len(got) != 1 || got[0].Email != "ada@example.com" {
		t.Fatalf("recipients %+v, want Ada only", got)
	}
}
