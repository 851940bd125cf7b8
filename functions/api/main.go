// Command api is every Lambda behind API Gateway's HTTP API (payload 2.0): the shared HTTP API
// (shared/httpapi) on DynamoDB and S3. template.yaml keeps one function per route (ApiWhoamiFunction
// for GET /api/v1/whoami, ApiPushFunction for Web Push's routes, …, and ApiDefaultFunction for the
// $default route: the contract's 404 and 405 Problems, and HEAD of the GET routes; SlackAppFunction
// and SlackInstallFunction for Slack's requests and the OAuth install), each with the
// least-privilege role its route needs; every one of them runs this same main (the Makefile's
// LAMBDA_DIRS). What a function may touch is its role's to say, not its code's.
//
// The event socket's $default route (a person's reply sent on the socket) is served here too, by
// ApiAsksReplyFunction, the function of the reply over HTTP (awsrt.Runtime.Gateway says why).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	lambda.Start(awsrt.MustLoad().Gateway())
}
