package awsrt

import (
	"context"
	"fmt"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// sweepBatch is how many expired leases one pass reaps.
const sweepBatch = 100

// Sweep is the sweeper function's handler, run on a schedule (an EventBridge rule, every
// minute): it removes leases whose holders stopped renewing them (an MCP function instance
// stopped mid-wait) and clears the waiting flag of asks nobody follows any more, as the local
// binary's sweep does every few seconds. It goes on while whole batches come back, until ctx
// ends. Everything else that expires (tickets, tasks, upload tickets, connections) DynamoDB's
// time to live deletes, and every read checks the exact expiry meanwhile.
func (rt *Runtime) Sweep(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := rt.Service.ReapLeases(ctx, sweepBatch)
		total += n
		if err != nil {
			return total, fmt.Errorf("reaping leases: %w", err)
		}
		if n < sweepBatch || ctx.Err() != nil {
			rt.Logger.InfoContext(ctx, "swept", "leases", total)
			return total, nil
		}
	}
}

// Bootstrap creates an owner credential for a space and returns its token, which is shown once
// and never stored (only its hash is): the first credential of a deployed stack (infra/bootstrap).
func Bootstrap(ctx context.Context, store ask.CredentialStore, space, name string) (string, *ask.Credential, error) {
	if space == "" || name == "" {
		return "", nil, fmt.Errorf("awsrt: bootstrap needs a space and a name")
	}
	owner := ask.Actor{ID: "owner:" + name, Name: name}
	return gate.Issue(ctx, store, ask.Credential{Space: space, Role: ask.RoleOwner, Actor: owner, Person: owner})
}
