package asktest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testSlackStore: Slack's links (one per person, one per Slack user), one-time codes (taken
// once, however many race; never after expiry), posted messages and a space's channel.
func testSlackStore(t *testing.T, open func(t *testing.T) ask.SlackStore) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	link := func(space, person, team, user string, at time.Time) *ask.SlackLink {
		return &ask.SlackLink{Space: space, Person: ask.Actor{ID: person, Name: "N " + person}, CredentialID: "cred_" + person,
			TeamID: team, UserID: user, UserName: "u " + user, LinkedAt: at}
	}

	t.Run("links", func(t *testing.T) {
		s := open(t)
		space, team := newSpace(), "T"+ask.NewID()[:8]
		if _, err := s.SlackLinkByUser(ctx, team, "U1"); ask.ErrorCode(err) != ask.ENotFound {
			t.Fatalf("no link yet: %v", err)
		}
		if err := s.PutSlackLink(ctx, link(space, "p1", team, "U1", t0)); err != nil {
			t.Fatal(err)
		}
		got, err := s.SlackLinkByUser(ctx, team, "U1")
		if err != nil || *got != *link(space, "p1", team, "U1", t0) {
			t.Fatalf("by user: %+v %v", got, err)
		}
		// p1 relinks as U2: U1 answers for nobody.
		if err := s.PutSlackLink(ctx, link(space, "p1", team, "U2", t0.Add(time.Second))); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SlackLinkByUser(ctx, team, "U1"); ask.ErrorCode(err) != ask.ENotFound {
			t.Fatalf("U1 after p1 relinked: %v", err)
		}
		// U2 now links p2: p1 has no link.
		if err := s.PutSlackLink(ctx, link(space, "p2", team, "U2", t0.Add(2*time.Second))); err != nil {
			t.Fatal(err)
		}
		if err := s.PutSlackLink(ctx, link(space, "p3", team, "U3", t0.Add(3*time.Second))); err != nil {
			t.Fatal(err)
		}
		links, err := s.SlackLinks(ctx, space)
		if err != nil || len(links) != 2 || links[0].Person.ID != "p2" || links[1].Person.ID != "p3" {
			t.Fatalf("links, oldest first: %+v %v", links, err)
		}
		if other, err := s.SlackLinks(ctx, newSpace()); err != nil || len(other) != 0 {
			t.Fatalf("another space's links: %+v %v", other, err)
		}
		if err := s.DeleteSlackLink(ctx, space, "p1"); ask.ErrorCode(err) != ask.ENotFound {
			t.Fatalf("unlinking the unlinked: %v", err)
		}
		if err := s.DeleteSlackLink(ctx, space, "p2"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SlackLinkByUser(ctx, team, "U2"); ask.ErrorCode(err) != ask.ENotFound {
			t.Fatalf("U2 after p2 unlinked: %v", err)
		}
		if links, _ := s.SlackLinks(ctx, space); len(links) != 1 || links[0].Person.ID != "p3" {
			t.Fatalf("after unlinking p2: %+v", links)
		}
	})

	t.Run("codes", func(t *testing.T) {
		s := open(t)
		cred := &ask.Credential{ID: "cred_" + ask.NewID()[:8], Space: newSpace(), Role: ask.RoleOwner, Person: ask.Actor{ID: "p", Name: "P"}}
		_, kept, err := ask.NewSlackCode(cred, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutSlackCode(ctx, kept); err != nil {
			t.Fatal(err)
		}
		got := make(chan *ask.SlackCode, 6)
		for range 6 {
			go func() {
				c, err := s.TakeSlackCode(ctx, kept.Hash, t0.Add(time.Minute))
				if err != nil && ask.ErrorCode(err) != ask.ENotFound {
					t.Error(err)
				}
				got <- c
			}()
		}
		var won []*ask.SlackCode
		for range 6 {
			if c := <-got; c != nil {
				won = append(won, c)
			}
		}
		if len(won) != 1 || won[0].Space != cred.Space || won[0].Person != cred.Person || won[0].CredentialID != cred.ID || !won[0].ExpiresAt.Equal(kept.ExpiresAt) {
			t.Fatalf("takers: %+v, want one with the code", won)
		}
		// Expired: never taken.
		_, old, _ := ask.NewSlackCode(cred, t0)
		if err := s.PutSlackCode(ctx, old); err != nil {
			t.Fatal(err)
		}
		if _, err := s.TakeSlackCode(ctx, old.Hash, old.ExpiresAt); ask.ErrorCode(err) != ask.ENotFound {
			t.Fatalf("an expired code: %v", err)
		}
	})

	t.Run("messages and channel", func(t *testing.T) {
		s := open(t)
		space, id := newSpace(), ask.NewID()
		for _, m := range []*ask.SlackMessage{{Space: space, AskID: id, Channel: "DA", TS: "1.1", To: "UA"}, {Space: space, AskID: id, Channel: "C1", TS: "1.2"}, {Space: space, AskID: id, Channel: "DA", TS: "1.3", To: "UA"}} {
			if err := s.PutSlackMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.SlackMessages(ctx, space, id)
		slices.SortFunc(got, func(x, y *ask.SlackMessage) int { return compare(x.Channel, y.Channel) })
		if err != nil || len(got) != 2 || *got[0] != (ask.SlackMessage{Space: space, AskID: id, Channel: "C1", TS: "1.2"}) || got[1].TS != "1.3" || got[1].To != "UA" {
			t.Fatalf("messages: %+v %v", got, err)
		}
		if none, err := s.SlackMessages(ctx, space, ask.NewID()); err != nil || len(none) != 0 {
			t.Fatalf("another ask's: %+v %v", none, err)
		}
		if ch, err := s.SlackChannel(ctx, space); err != nil || ch != "" {
			t.Fatalf("no channel set: %q %v", ch, err)
		}
		for _, want := range []string{"C0ONCALL", ""} {
			if err := s.PutSlackChannel(ctx, space, want); err != nil {
				t.Fatal(err)
			}
			if ch, err := s.SlackChannel(ctx, space); err != nil || ch != want {
				t.Fatalf("channel: %q %v, want %q", ch, err, want)
			}
		}
	})
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
