package ask

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// An ask belongs to the agent that raised it. Only that agent acts on it afterwards: waits on it
// (await_reply), answers the person on it (answer_follow_up, answer_briefing), or revises it
// (request_review with revises). Another agent of the same space is told there is no such ask,
// in the same words as for an id that names nothing, so that it learns nothing of another's ask
// and never receives another's reply.

// Owns reports whether o may act on a as its agent: a is in o's space and was raised with o's
// credential; or o is a person's credential (used over MCP) and a was raised in that person's
// name. An ask stored before asks kept their credential is its person's agents' to act on.
func (o Origin) Owns(a *Ask) bool {
	if a == nil || a.Space != o.Space {
		return false
	}
	if a.CredentialID != "" && a.CredentialID == o.CredentialID {
		return true
	}
	if o.Role.IsPerson() || a.CredentialID == "" {
		return actorID(a.RaisedBy) == actorID(o.RaisedBy)
	}
	return false
}

func actorID(a *Actor) string {
	if a == nil {
		return ""
	}
	return a.ID
}

// FindOwn returns an ask o owns (Owns), or AskNotFound: the same words for another agent's ask
// as for one that does not exist.
func (s *Service) FindOwn(ctx context.Context, o Origin, id string) (*Ask, error) {
	a, err := s.Find(ctx, o.Space, id)
	if err != nil {
		return nil, err
	}
	if !o.Owns(a) {
		return nil, AskNotFound(id)
	}
	return a, nil
}

// ClosedBy lists the asks raised with o's credential that closed at or after since, most recently
// closed first, up to limit.
func (s *Service) ClosedBy(ctx context.Context, o Origin, since time.Time, limit int) ([]*Ask, error) {
	if o.CredentialID == "" {
		return nil, nil
	}
	return s.Store.ClosedAsksBy(ctx, o.Space, o.CredentialID, since, limit)
}

// TurnCredentials is what a store keeps of an ask's turns beside its contract JSON: the
// credential of each turn (Entry.CredentialID), as a JSON array parallel to the thread; "" when
// no turn names one.
func TurnCredentials(a *Ask) string {
	creds := make([]string, len(a.Thread))
	some := false
	for i, e := range a.Thread {
		creds[i] = e.CredentialID
		some = some || e.CredentialID != ""
	}
	if !some {
		return ""
	}
	b, _ := json.Marshal(creds)
	return string(b)
}

// SetTurnCredentials puts what TurnCredentials gave back on the ask's thread.
func SetTurnCredentials(a *Ask, stored string) error {
	if stored == "" {
		return nil
	}
	var creds []string
	if err := json.Unmarshal([]byte(stored), &creds); err != nil {
		return fmt.Errorf("turn credentials of ask %s: %w", a.ID, err)
	}
	for i := range min(len(creds), len(a.Thread)) {
		a.Thread[i].CredentialID = creds[i]
	}
	return nil
}
