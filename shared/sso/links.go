package sso

import (
	"context"
	"errors"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Linked identities, for GET and DELETE /api/v1/sso/links (contract revision 6): the owner sees
// and unlinks every link of the space, a teammate their own; an agent none (the API's gate
// refuses it first). They work whether or not single sign-on is configured now, so that links
// made earlier can always be removed.

// Links lists the links by may see, oldest first.
func Links(ctx context.Context, store ask.SSOStore, by *ask.Credential) ([]*ask.SSOLink, error) {
	if err := by.ForPerson(); err != nil {
		return nil, err
	}
	all, err := store.SSOLinks(ctx, by.Space)
	if err != nil {
		return nil, err
	}
	out := []*ask.SSOLink{}
	for _, l := range all {
		if by.Role == ask.RoleOwner || l.Person.ID == personID(by) {
			out = append(out, l)
		}
	}
	return out, nil
}

// Unlink removes a link by may see: the identity signs in as nobody from then on (unless Allow
// lets it in again as a new teammate). Credentials its sign-ins made stay until revoked.
func Unlink(ctx context.Context, store ask.SSOStore, by *ask.Credential, id string) error {
	list, err := Links(ctx, store, by)
	if err != nil {
		return err
	}
	for _, l := range list {
		if l.ID == id {
			err := store.DeleteSSOLink(ctx, by.Space, id)
			if errors.Is(err, ask.ErrNotFound) {
				break
			}
			return err
		}
	}
	return ask.Errorf(ask.ENotFound, "no single sign-on link %q of yours in this space (GET /api/v1/sso/links lists them)", id)
}

// personID is whom a credential belongs to.
func personID(c *ask.Credential) string {
	if c.Person.ID != "" {
		return c.Person.ID
	}
	return c.Actor.ID
}
