// Command stream-fanout reads the table's DynamoDB stream: each new connection gets its snapshot,
// each change of an ask goes to every connection of its space (shared/wsapi), with
// ReportBatchItemFailures.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	lambda.Start(awsrt.MustLoad().Stream())
}
