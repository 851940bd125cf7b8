// Command mcp serves /mcp on a Lambda function URL with response streaming (InvokeMode
// RESPONSE_STREAM): the shared MCP server (shared/mcptools), its waits polling the ask's head.
package main

import (
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	lambdaurl.Start(awsrt.MustLoad().MCP())
}
