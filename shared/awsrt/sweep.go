package awsrt

import (
	"context"
	"fmt"
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
