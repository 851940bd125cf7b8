// Command api-default is the Lambda behind every other request under /api/ (the HTTP API's $default route): the contract's 404 and 405 Problems, and HEAD of the GET routes: the shared HTTP API
// (shared/httpapi) on DynamoDB and S3, behind API Gateway's HTTP API (payload 2.0).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	lambda.Start(httpadapter.NewV2(awsrt.MustLoad().API()).ProxyWithContext)
}
