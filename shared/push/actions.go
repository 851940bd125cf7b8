package push

import (
	"context"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// ActionLifetime is how long a notification's action link answers: long enough to answer from a
// lock screen, short enough that a notification left on a device is not a standing credential.
// A button pressed later opens the ask instead. docs/limits.md.
const ActionLifetime = 2 * time.Hour

// ActionPath is where a signed action link is POSTed (the route the email links use too).
const ActionPath = "/api/v1/actions/"

// ActionLinks signs a notification's offered answers with x (ask.Actions: the deployment's
// action key), for Sender.Sign: one link per button, for the one reply it gives, through the
// surface push, for person only, single use, for ActionLifetime.
func ActionLinks(x *ask.Actions) func(ctx context.Context, a *ask.Ask, person ask.Actor, offer ask.NoticeAction) (string, error) {
	return func(ctx context.Context, a *ask.Ask, person ask.Actor, offer ask.NoticeAction) (string, error) {
		token, _, err := x.Issue(ctx, a, person, []ask.ActionChoice{offer.Choice}, ask.SurfacePush, ActionLifetime)
		if err != nil {
			return "", err
		}
		return ActionPath + token, nil
	}
}
