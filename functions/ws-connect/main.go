// Command ws-connect is the event socket's $connect: authenticates the ticket subprotocol (or a bearer token), selects loopback.v1 and records the connection with its space (shared/wsapi).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	lambda.Start(awsrt.MustLoad().Sockets().Connect)
}
