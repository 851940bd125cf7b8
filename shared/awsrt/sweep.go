package awsrt

import "context"

// Sweep is the sweeper function's handler, run on a schedule (an EventBridge rule, every
// minute): app.Sweep, as the local binary runs it every few seconds. Everything else that expires
// (tickets, tasks, upload tickets, connections) DynamoDB's time to live deletes, and every read
// checks the exact expiry meanwhile.
func (rt *Runtime) Sweep(ctx context.Context) (int, error) {
	n, err := rt.App.Sweep(ctx)
	if err == nil {
		rt.Logger.InfoContext(ctx, "swept", "leases", n)
	}
	return n, err
}
