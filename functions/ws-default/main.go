// Command ws-default is the event socket's $default: a message from a client, which clients never send: the connection is closed (shared/wsapi).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	lambda.Start(awsrt.MustLoad().Sockets().Default)
}
