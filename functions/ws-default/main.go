// Command ws-default is the event socket's $default: a frame from a client, a person's reply (contract revision 8), answered on the same connection (shared/wsapi).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	lambda.Start(awsrt.MustLoad().Sockets().Default)
}
