// Command api-uploads is the Lambda behind PUT /api/v1/uploads/{spaceId}/{token}: the shared HTTP API
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
