// Package awslocal runs the AWS deployment's own Lambda handlers on one machine, without Docker:
// the pieces of AWS that stand between a client and those handlers, each turning real HTTP into
// the events AWS delivers (aws-lambda-go's events types) and the handlers' answers back.
//
//   - HTTPAPI: API Gateway's HTTP API, payload 2.0, a route → function table read from
//     template.yaml (a route missing there is missing here: it falls through to $default).
//   - WebSocketAPI and Connections: API Gateway's WebSocket API ($connect, $disconnect,
//     $default) and the @connections endpoint the functions post frames to (moto's is of no use:
//     it accepts any connection id and keeps what is posted out of reach).
//   - FunctionURL: a Lambda function URL with response streaming (lambdaurl).
//   - Pump: Lambda's event source mapping on the table's DynamoDB stream, with the template's
//     batch size, filters, ReportBatchItemFailures and retries.
//   - Deployment: all of it wired from template.yaml, each function on its own awsrt.Runtime
//     with only the environment the template gives it and a note of every AWS call it makes,
//     so a call its role does not allow is warned about here before AWS refuses it (iam.go).
//
// `loopback aws-local` (cmd/loopback) serves a Deployment on one port; shared/awsrt's tests use
// the same pieces in-process. moto's server (moto.go) stands in for DynamoDB, its stream and S3.
package awslocal
