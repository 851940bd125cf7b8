// Command ws-disconnect is the event socket's $disconnect: forgets the connection (shared/wsapi).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	lambda.Start(awsrt.MustLoad().Sockets().Disconnect)
}
