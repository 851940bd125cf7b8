// Command sweeper runs every minute (an EventBridge rule): it reaps leases of waits that ended
// without releasing them, and clears the waiting flag of asks nobody follows any more.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	rt := awsrt.MustLoad()
	lambda.Start(func(ctx context.Context) error {
		_, err := rt.Sweep(ctx)
		return err
	})
}
