package awsrt

import "context"

// Sweep is the sweeper function's handler, run on a schedule (an EventBridge rule, every
// minute): app.Sweep, as the local binary runs it every few seconds, then app.SweepDue, which
// closes the asks whose deadlines passed and escalates those due (locally a timer does that on
// time; here a waiting call closes its own ask at its deadline, and this sweep, within a minute,
// the asks nobody waits on). Everything else that expires (tickets, tasks, upload tickets,
// connections) DynamoDB's time to live deletes, and every read checks the exact expiry meanwhile.
func (rt *Runtime) Sweep(ctx context.Context) (int, error) {
	n, err := rt.App.Sweep(ctx)
	if err != nil {
		return n, err
	}
	due, err := rt.App.SweepDue(ctx)
	if err == nil {
		rt.Logger.InfoContext(ctx, "swept", "leases", n, "due", due)
	}
	return n, err
}
