package asktest

import (
	"context"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testMailStore runs the conformance suite for ask.MailStore: one address per person of a space,
// replaced by the next, removed by an empty one, never seen from another space.
func testMailStore(t *testing.T, open func(t *testing.T) ask.MailStore) {
	s, ctx := open(t), context.Background()
	space, other := newSpace(), newSpace()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	for _, m := range []*ask.MailAddress{
		{Space: space, PersonID: "p-bob", Email: "bob@example.com", UpdatedAt: at},
		{Space: space, PersonID: "p-ada", Name: "Ada", Email: "ada@old.example", UpdatedAt: at},
		{Space: space, PersonID: "p-ada", Name: "Ada", Email: "ada@example.com", UpdatedAt: at.Add(time.Second)},
		{Space: other, PersonID: "p-eve", Email: "eve@example.com", UpdatedAt: at},
	} {
		if err := s.PutMailAddress(ctx, m); err != nil {
			t.Fatalf("PutMailAddress: %v", err)
		}
	}
	got, err := s.MailAddresses(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "the space's addresses", []*ask.MailAddress{
		{Space: space, PersonID: "p-ada", Name: "Ada", Email: "ada@example.com", UpdatedAt: at.Add(time.Second)},
		{Space: space, PersonID: "p-bob", Email: "bob@example.com", UpdatedAt: at},
	}, got)
	if err := s.PutMailAddress(ctx, &ask.MailAddress{Space: space, PersonID: "p-bob"}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.MailAddresses(ctx, space)
	if len(got) != 1 || got[0].PersonID != "p-ada" {
		t.Fatalf("after removing Bob's: %+v", got)
	}
}
