// Command api-rules is the Lambda behind the rules routes (contract revision 3): GET and POST
// /api/v1/rules, PUT and DELETE /api/v1/rules/{id}: the shared HTTP API (shared/httpapi) on
// DynamoDB, behind API Gateway's HTTP API (payload 2.0).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	lambda.Start(httpadapter.NewV2(awsrt.MustLoad().API()).ProxyWithContext)
}
