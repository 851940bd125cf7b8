package awslocal

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go/middleware"

	"github.com/loopback-hq/loopback/shared/samtemplate"
)

// Calls notes every AWS call one function makes, as the IAM actions AWS would check for it, and
// warns the first time one of them is not allowed by the function's policy in template.yaml:
// moto (and a laptop's own credentials) allow everything, so without this a call the role lacks
// would first fail on AWS. Resources are compared only as far as DynamoDB's indexes (a Query
// on an index needs the index's ARN); conditions are not evaluated.
type Calls struct {
	Function *samtemplate.Function
	Logger   *slog.Logger

	mu      sync.Mutex
	seen    map[string]bool
	missing []string
}

// Middleware adds the note-taking to an SDK client's stack (aws.Config.APIOptions).
func (c *Calls) Middleware(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("awslocal.Calls",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			for _, a := range actions(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx), in.Parameters) {
				c.note(a)
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

// action is an IAM action and, for DynamoDB, whether it is on an index.
type action struct {
	name  string
	index bool
}

func (c *Calls) note(a action) {
	key := a.name
	if a.index {
		key += " on an index"
	}
	c.mu.Lock()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	first := !c.seen[key]
	c.seen[key] = true
	c.mu.Unlock()
	if !first {
		return
	}
	resource := func(r string) bool {
		if !a.index || r == "*" {
			return true
		}
		return strings.Contains(r, "/index/")
	}
	if c.Function.AllowsOn(a.name, resource) {
		return
	}
	c.mu.Lock()
	c.missing = append(c.missing, key)
	c.mu.Unlock()
	c.Logger.Warn(fmt.Sprintf("IAM: %s called %s, which its policy in template.yaml does not allow: on AWS the call fails (AccessDenied)", c.Function.ID, key),
		"function", c.Function.ID, "action", a.name, "index", a.index)
}

// Missing lists the actions the function used that its policy does not allow.
func (c *Calls) Missing() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]string(nil), c.missing...)
	sort.Strings(out)
	return out
}

// Used lists every action the function used.
func (c *Calls) Used() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k := range c.seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// actions are the IAM actions AWS checks for one SDK call.
func actions(service, op string, params any) []action {
	switch service {
	case "DynamoDB":
		switch in := params.(type) {
		case *dynamodb.TransactWriteItemsInput:
			// No action of its own: each item's.
			var out []action
			for _, it := range in.TransactItems {
				switch {
				case it.Put != nil:
					out = append(out, action{name: "dynamodb:PutItem"})
				case it.Update != nil:
					out = append(out, action{name: "dynamodb:UpdateItem"})
				case it.Delete != nil:
					out = append(out, action{name: "dynamodb:DeleteItem"})
				case it.ConditionCheck != nil:
					out = append(out, action{name: "dynamodb:ConditionCheckItem"})
				}
			}
			return out
		case *dynamodb.TransactGetItemsInput:
			return []action{{name: "dynamodb:GetItem"}}
		case *dynamodb.QueryInput:
			return []action{{name: "dynamodb:Query", index: in.IndexName != nil}}
		case *dynamodb.ScanInput:
			return []action{{name: "dynamodb:Scan", index: in.IndexName != nil}}
		}
		return []action{{name: "dynamodb:" + op}}
	case "S3":
		switch op {
		case "HeadObject":
			return []action{{name: "s3:GetObject"}}
		case "HeadBucket", "ListObjectsV2":
			return []action{{name: "s3:ListBucket"}}
		}
		return []action{{name: "s3:" + op}}
	case "SSM":
		out := []action{{name: "ssm:" + op}}
		if in, ok := params.(*ssm.GetParameterInput); ok && in.WithDecryption != nil && *in.WithDecryption {
			out = append(out, action{name: "kms:Decrypt"})
		}
		return out
	case "ApiGatewayManagementApi":
		return []action{{name: "execute-api:ManageConnections"}}
	case "DynamoDB Streams":
		return []action{{name: "dynamodb:" + op}}
	}
	return []action{{name: strings.ToLower(strings.ReplaceAll(service, " ", "")) + ":" + op}}
}
