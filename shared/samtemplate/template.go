// Package samtemplate reads template.yaml, the SAM template a deployment is made from, as YAML
// nodes: CloudFormation's short forms (!Ref, !GetAtt, !Sub, !If …) are kept as tagged nodes
// rather than refused. Two readers share it: infra/templatecheck, which checks that the template,
// the Makefile and the route table agree, and shared/awslocal, which runs the template's
// functions on a laptop with the routes, environment, stream settings and schedule the template
// gives them. One reader, so that what is checked is what is run.
package samtemplate

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Template is what Loopback's readers need of template.yaml.
type Template struct {
	Functions       []*Function // AWS::Serverless::Function, in the template's order
	HasWebSocketAPI bool
	// WebSocketAPIs are the logical IDs of the AWS::ApiGatewayV2::Api resources with
	// ProtocolType WEBSOCKET.
	WebSocketAPIs []string
	// WebSocketRoutes maps a WebSocket route key ($connect, $disconnect, $default) to the
	// function its AWS_PROXY integration invokes.
	WebSocketRoutes map[string]string
	// WebSocketTwoWay holds the WebSocket route keys that are two-way: the route has a
	// RouteResponseSelectionExpression and an AWS::ApiGatewayV2::RouteResponse, so API Gateway
	// sends the function's response body back to the client as a message.
	WebSocketTwoWay map[string]bool
	CachePaths      []string // the Distribution's CacheBehaviors' PathPatterns
	// Parameters are the template's parameters with their defaults.
	Parameters map[string]string
	// Resources maps each resource's logical ID to its type.
	Resources map[string]string
	// GlobalEnv is Globals.Function.Environment.Variables, unresolved.
	GlobalEnv map[string]*yaml.Node
	// GlobalTimeout is Globals.Function.Timeout in seconds (0 when unset).
	GlobalTimeout int
}

// Function is one AWS::Serverless::Function.
type Function struct {
	ID, BuildMethod, CodeURI string
	Events                   []Event // HttpApi events only
	Statements               []Statement
	// Env is the function's own Environment.Variables, unresolved; Globals' come first.
	Env map[string]*yaml.Node
	// Timeout in seconds, the function's or else Globals'.
	Timeout int
	// Stream is its DynamoDB event source, if any.
	Stream *StreamSource
	// Schedules are its Schedule events' expressions, such as rate(1 minute).
	Schedules []string
	// ObjectCreated says an EventBridgeRule event sends it S3's "Object Created" events (source
	// aws.s3), the upload checker's.
	ObjectCreated bool
	// HasURL says it has a FunctionUrlConfig; URLInvokeMode is its InvokeMode.
	HasURL        bool
	URLInvokeMode string
}

// Event is one HttpApi event of a function.
type Event struct{ Name, Method, Path, APIID string }

// Key is the event's route key as API Gateway writes it: "GET /api/v1/asks/{id}".
func (e Event) Key() string { return strings.ToUpper(e.Method) + " " + e.Path }

// StreamSource is a function's DynamoDB event source mapping, as the template declares it.
type StreamSource struct {
	Stream                  string // rendered, such as !GetAtt AskTable.StreamArn
	StartingPosition        string // LATEST or TRIM_HORIZON
	BatchSize               int
	MaximumRetryAttempts    int // -1: until the record expires
	BisectBatchOnError      bool
	ReportBatchItemFailures bool
	Filters                 []string // FilterCriteria patterns, as JSON text
}

// Statement is one Allow statement of a function's policy, its actions one by one (or a SAM
// policy template, by name, as its one action).
type Statement struct {
	Actions   []string
	Resource  string
	Condition string
}

// Load reads the template at path.
func Load(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse reads a template.
func Parse(b []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("template.yaml: %w", err)
	}
	if len(doc.Content) != 1 {
		return nil, errors.New("template.yaml: not one YAML document")
	}
	root := doc.Content[0]
	resources := Get(root, "Resources")
	if resources == nil || resources.Kind != yaml.MappingNode {
		return nil, errors.New("template.yaml: no Resources")
	}
	tmpl := &Template{WebSocketRoutes: map[string]string{}, WebSocketTwoWay: map[string]bool{}, Parameters: map[string]string{}, Resources: map[string]string{}}
	params := Get(root, "Parameters")
	for i := 0; params != nil && i+1 < len(params.Content); i += 2 {
		tmpl.Parameters[params.Content[i].Value] = Scalar(Get(params.Content[i+1], "Default"))
	}
	globals := Get(Get(root, "Globals"), "Function")
	tmpl.GlobalEnv = mapping(Get(Get(globals, "Environment"), "Variables"))
	fmt.Sscan(Scalar(Get(globals, "Timeout")), &tmpl.GlobalTimeout)

	integrations := map[string]string{} // integration ID → function ID
	routes := map[string]string{}       // route key → integration ID
	routeKeys := map[string]string{}    // route ID → its key, for routes that select a response
	responded := map[string]bool{}      // route IDs with a RouteResponse
	var errs []error
	for i := 0; i+1 < len(resources.Content); i += 2 {
		id, res := resources.Content[i].Value, resources.Content[i+1]
		props := Get(res, "Properties")
		typ := Scalar(Get(res, "Type"))
		tmpl.Resources[id] = typ
		switch typ {
		case "AWS::Serverless::Function":
			f, err := readFunction(id, res, tmpl.GlobalTimeout)
			if err != nil {
				errs = append(errs, err)
			}
			tmpl.Functions = append(tmpl.Functions, f)
		case "AWS::ApiGatewayV2::Api":
			if Scalar(Get(props, "ProtocolType")) == "WEBSOCKET" {
				tmpl.HasWebSocketAPI = true
				tmpl.WebSocketAPIs = append(tmpl.WebSocketAPIs, id)
			}
		case "AWS::ApiGatewayV2::Integration":
			// IntegrationUri: !Sub "arn:…:functions/${WsConnectFunction.Arn}/invocations"
			if m := integrationFunction.FindStringSubmatch(Scalar(Get(props, "IntegrationUri"))); m != nil {
				integrations[id] = m[1]
			}
		case "AWS::ApiGatewayV2::Route":
			// Target: !Sub "integrations/${EventsConnectIntegration}"
			target := strings.TrimSuffix(strings.TrimPrefix(Scalar(Get(props, "Target")), "integrations/${"), "}")
			routes[Scalar(Get(props, "RouteKey"))] = target
			if Scalar(Get(props, "RouteResponseSelectionExpression")) != "" {
				routeKeys[id] = Scalar(Get(props, "RouteKey"))
			}
		case "AWS::ApiGatewayV2::RouteResponse":
			// RouteId: !Ref EventsDefaultRoute
			responded[strings.TrimPrefix(Render(Get(props, "RouteId")), "!Ref ")] = true
		case "AWS::CloudFront::Distribution":
			behaviors := Get(Get(props, "DistributionConfig"), "CacheBehaviors")
			for _, cb := range Items(behaviors) {
				tmpl.CachePaths = append(tmpl.CachePaths, Scalar(Get(cb, "PathPattern")))
			}
		}
	}
	for key, integration := range routes {
		if fn := integrations[integration]; fn != "" {
			tmpl.WebSocketRoutes[key] = fn
		}
	}
	for id, key := range routeKeys {
		if responded[id] {
			tmpl.WebSocketTwoWay[key] = true
		}
	}
	if len(tmpl.Functions) == 0 {
		errs = append(errs, errors.New("template.yaml: no AWS::Serverless::Function"))
	}
	return tmpl, errors.Join(errs...)
}

var integrationFunction = regexp.MustCompile(`\$\{(\w+)\.Arn\}`)

func readFunction(id string, res *yaml.Node, globalTimeout int) (*Function, error) {
	props := Get(res, "Properties")
	f := &Function{ID: id, BuildMethod: Scalar(Get(Get(res, "Metadata"), "BuildMethod")), CodeURI: Scalar(Get(props, "CodeUri")),
		Env: mapping(Get(Get(props, "Environment"), "Variables")), Timeout: globalTimeout}
	fmt.Sscan(Scalar(Get(props, "Timeout")), &f.Timeout)
	if u := Get(props, "FunctionUrlConfig"); u != nil {
		f.HasURL, f.URLInvokeMode = true, Scalar(Get(u, "InvokeMode"))
	}
	evs := Get(props, "Events")
	for j := 0; evs != nil && j+1 < len(evs.Content); j += 2 {
		ev := evs.Content[j+1]
		p := Get(ev, "Properties")
		switch Scalar(Get(ev, "Type")) {
		case "HttpApi":
			f.Events = append(f.Events, Event{Name: evs.Content[j].Value, Method: Scalar(Get(p, "Method")), Path: Scalar(Get(p, "Path")), APIID: Render(Get(p, "ApiId"))})
		case "DynamoDB":
			s := &StreamSource{Stream: Render(Get(p, "Stream")), StartingPosition: Scalar(Get(p, "StartingPosition")), BatchSize: 100, MaximumRetryAttempts: -1,
				BisectBatchOnError: Scalar(Get(p, "BisectBatchOnFunctionError")) == "true"}
			fmt.Sscan(Scalar(Get(p, "BatchSize")), &s.BatchSize)
			fmt.Sscan(Scalar(Get(p, "MaximumRetryAttempts")), &s.MaximumRetryAttempts)
			for _, t := range Items(Get(p, "FunctionResponseTypes")) {
				if Scalar(t) == "ReportBatchItemFailures" {
					s.ReportBatchItemFailures = true
				}
			}
			for _, fl := range Items(Get(Get(p, "FilterCriteria"), "Filters")) {
				s.Filters = append(s.Filters, Scalar(Get(fl, "Pattern")))
			}
			f.Stream = s
		case "Schedule":
			f.Schedules = append(f.Schedules, Scalar(Get(p, "Schedule")))
		case "EventBridgeRule":
			pat := Get(p, "Pattern")
			for _, src := range Items(Get(pat, "source")) {
				for _, dt := range Items(Get(pat, "detail-type")) {
					if Scalar(src) == "aws.s3" && Scalar(dt) == "Object Created" {
						f.ObjectCreated = true
					}
				}
			}
		}
	}
	var err error
	f.Statements, err = policyStatements(id, Get(props, "Policies"))
	return f, err
}

func policyStatements(id string, policies *yaml.Node) ([]Statement, error) {
	var out []Statement
	var errs []error
	for _, p := range Items(policies) {
		switch {
		case p.Kind == yaml.ScalarNode: // a managed policy by name or ARN
			out = append(out, Statement{Actions: []string{"sam:" + Render(p)}, Resource: "*"})
		case Get(p, "Statement") != nil:
			for _, s := range Items(Get(p, "Statement")) {
				if Scalar(Get(s, "Effect")) != "Allow" {
					continue
				}
				st := Statement{Resource: Render(Get(s, "Resource")), Condition: Render(Get(s, "Condition"))}
				for _, a := range Items(Get(s, "Action")) {
					st.Actions = append(st.Actions, Scalar(a))
				}
				out = append(out, st)
			}
		case p.Kind == yaml.MappingNode && len(p.Content) == 2: // a SAM policy template
			out = append(out, Statement{Actions: []string{"sam:" + p.Content[0].Value}, Resource: Render(p.Content[1])})
		default:
			errs = append(errs, fmt.Errorf("template.yaml: %s has a policy this reader does not understand: %s", id, Render(p)))
		}
	}
	return out, errors.Join(errs...)
}

// Function is the function with that logical ID, or nil.
func (t *Template) Function(id string) *Function {
	for _, f := range t.Functions {
		if f.ID == id {
			return f
		}
	}
	return nil
}

func mapping(n *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = n.Content[i+1]
	}
	return out
}

// Get is a mapping node's value for key, or nil.
func Get(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Items is a sequence's items, or a lone node as one item.
func Items(n *yaml.Node) []*yaml.Node {
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.SequenceNode:
		return n.Content
	default:
		return []*yaml.Node{n}
	}
}

// Scalar is a scalar node's value, or "".
func Scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// Render writes a node on one line, with its CloudFormation tag: !GetAtt AskTable.Arn,
// [pk, sk], {dynamodb:Attributes: [pk, sk, lastUsedAt]}.
func Render(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	tag := ""
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		tag = n.Tag + " "
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return tag + n.Value
	case yaml.SequenceNode:
		var parts []string
		for _, c := range n.Content {
			parts = append(parts, Render(c))
		}
		if len(parts) == 1 && tag == "" {
			return parts[0] // Resource: [x] is Resource: x
		}
		return tag + "[" + strings.Join(parts, ", ") + "]"
	case yaml.MappingNode:
		var parts []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			parts = append(parts, n.Content[i].Value+": "+Render(n.Content[i+1]))
		}
		return tag + "{" + strings.Join(parts, ", ") + "}"
	case yaml.AliasNode:
		return Render(n.Alias)
	}
	return ""
}
