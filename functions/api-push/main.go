// Command api-push is the Lambda behind Web Push's routes (contract revision 2): GET
// /api/v1/push/key, POST /api/v1/push/subscriptions and DELETE /api/v1/push/subscriptions/{id}:
// the shared HTTP API (shared/httpapi) on DynamoDB, behind API Gateway's HTTP API (payload 2.0).
// Pushes themselves go out from the stream fan-out.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	lambda.Start(httpadapter.NewV2(awsrt.MustLoad().API()).ProxyWithContext)
}
