package awslocal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/samtemplate"
)

// Options say where a Deployment keeps things and what template.yaml's references resolve to.
type Options struct {
	Template *samtemplate.Template
	// Config reaches the table, bucket and parameters: moto's, or an account's.
	Config aws.Config
	// Table and Bucket are the template's table (its one AWS::DynamoDB::Table) and the bucket
	// LOOPBACK_BUCKET names; both must exist.
	Table, Bucket string
	// StackName is AWS::StackName (it names the VAPID parameters, for one).
	StackName string
	// Parameters override the template's parameter defaults, such as PublicUrl (where people
	// reach the deployment: here, this machine's address).
	Parameters map[string]string
	// Env overrides variables of one function's environment, by logical ID; a variable the
	// template does not give the function is refused, so that overrides cannot hide a gap.
	Env map[string]map[string]string
	// PushLoopback gives every function the tests' switch that lets push subscriptions and pushes
	// reach a stand-in push service on 127.0.0.1 (LOOPBACK_PUSH_TEST_LOOPBACK=1), which no
	// deployment has: for tests only.
	PushLoopback bool
	// SlackAPIURL gives every function another Slack Web API base (LOOPBACK_SLACK_API_URL): the
	// tests' stand-in Slack. No deployment has it.
	SlackAPIURL string
	// StreamPoll is how often the stream is read (default 250 ms: Lambda polls a shard about four
	// times a second).
	StreamPoll time.Duration
	Logger     *slog.Logger
}

// Deployment is template.yaml's functions on this machine, each on its own awsrt.Runtime built
// from the environment the template gives it, behind local stand-ins for what AWS puts in front
// of them: the HTTP API, the WebSocket API and its @connections endpoint, the MCP function URL,
// the stream's event source mapping and the sweeper's schedule. Which of a function's handlers
// runs follows its role in the template, as each functions/<name>/main.go starts it.
type Deployment struct {
	API         *HTTPAPI
	Events      *WebSocketAPI
	MCP         *FunctionURL
	Pump        *Pump
	Connections *Connections
	// Calls are each function's AWS calls (iam.go), by logical ID.
	Calls map[string]*Calls
	// Runtimes are the functions' runtimes, by logical ID.
	Runtimes map[string]*awsrt.Runtime
	// S3 is the front of the emulator's S3 (s3.go); nil against a real account.
	S3 *S3Front
	// mcp are the MCP function's instances: their waits end on Shutdown.
	mcp *instances
	// buckets are the uploads buckets the origin serves (CloudFront's /uploads/*).
	buckets []string

	schedules  []schedule
	streamPoll time.Duration
	connSrv    *http.Server
	logger     *slog.Logger
}

type schedule struct {
	function string
	every    time.Duration
	run      func(context.Context) (int, error)
}

// New builds the deployment. Call Run to start its stream and schedules, Close to stop.
func New(ctx context.Context, o Options) (*Deployment, error) {
	t := o.Template
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	d := &Deployment{Connections: NewConnections(), Calls: map[string]*Calls{}, Runtimes: map[string]*awsrt.Runtime{}, logger: o.Logger}

	// The @connections endpoint on an address of its own, as on AWS: not one of the public paths.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d.connSrv = &http.Server{Handler: d.Connections, ReadHeaderTimeout: 10 * time.Second}
	go d.connSrv.Serve(ln)
	connURL := "http://" + ln.Addr().String()

	values, err := localValues(ctx, o)
	if err != nil {
		d.Close()
		return nil, err
	}
	region := values.Refs["AWS::Region"]
	stage := values.Refs["Stage"]
	var gateways []string // the WebSocket APIs' stage URLs, which are the @connections endpoint here
	for _, id := range t.WebSocketAPIs {
		gateways = append(gateways, "https://"+values.Refs[id]+".execute-api."+region+".amazonaws.com")
	}
	for fn, vars := range o.Env {
		f := t.Function(fn)
		if f == nil {
			d.Close()
			return nil, fmt.Errorf("awslocal: no function %s in template.yaml", fn)
		}
		env, _ := t.Environment(f, values)
		for k := range vars {
			if _, ok := env[k]; !ok {
				d.Close()
				return nil, fmt.Errorf("awslocal: template.yaml gives %s no %s to override", fn, k)
			}
		}
	}

	base := o.Config.Copy()
	if o.Config.BaseEndpoint != nil {
		// An emulator: its S3 gets a front that does what S3 and EventBridge do around a bucket.
		if d.S3, err = NewS3Front(*o.Config.BaseEndpoint, o.Logger); err != nil {
			d.Close()
			return nil, err
		}
		base.BaseEndpoint = &d.S3.URL
	}
	d.API = &HTTPAPI{APIID: "httpapi", ForwardHost: true, Logger: o.Logger}
	d.Events = &WebSocketAPI{Connections: d.Connections, APIID: "eventsapi", Stage: stage, ForwardHost: true, Logger: o.Logger}
	vapid := map[string]bool{}
	var errs []error
	for _, f := range t.Functions {
		env, err := t.Environment(f, values)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for k, v := range env {
			for _, g := range gateways {
				if strings.HasPrefix(v, g) {
					env[k] = connURL + strings.TrimPrefix(v, g)
				}
			}
		}
		for k, v := range o.Env[f.ID] {
			env[k] = v
		}
		if o.PushLoopback {
			env["LOOPBACK_PUSH_TEST_LOOPBACK"] = "1"
		}
		if o.SlackAPIURL != "" {
			env["LOOPBACK_SLACK_API_URL"] = o.SlackAPIURL
		}
		if p := env["LOOPBACK_VAPID_PARAMETER"]; p != "" && !vapid[p] {
			// make bootstrap's part on AWS: the deployment's Web Push key pair in SSM.
			vapid[p] = true
			if _, _, err := awsrt.EnsureVAPID(ctx, ssm.NewFromConfig(o.Config), p); err != nil {
				errs = append(errs, fmt.Errorf("making the VAPID keys %s: %w", p, err))
				continue
			}
		}
		if p := env["LOOPBACK_ACTION_KEY_PARAMETER"]; p != "" && !vapid[p] {
			// make bootstrap's part on AWS too: the action links' signing key in SSM.
			vapid[p] = true
			if _, _, err := awsrt.EnsureActionKey(ctx, ssm.NewFromConfig(o.Config), p); err != nil {
				errs = append(errs, fmt.Errorf("making the action key %s: %w", p, err))
				continue
			}
		}
		ae, err := awsrt.EnvFrom(func(k string) string { return env[k] })
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.ID, err))
			continue
		}
		calls := &Calls{Function: f, Logger: o.Logger}
		cfg := base.Copy()
		cfg.APIOptions = append(cfg.APIOptions, calls.Middleware)
		rt, err := awsrt.New(cfg, ae)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.ID, err))
			continue
		}
		d.Calls[f.ID], d.Runtimes[f.ID] = calls, rt
		timeout := time.Duration(f.Timeout) * time.Second
		roles := 0
		if len(f.Events) > 0 {
			roles++
			handler := httpadapter.NewV2(rt.API()).ProxyWithContext
			for _, e := range f.Events {
				d.API.Routes = append(d.API.Routes, Route{Key: e.Key(), Function: f.ID, Handler: handler, Timeout: timeout})
			}
		}
		for route, fn := range t.WebSocketRoutes {
			if fn != f.ID {
				continue
			}
			roles++
			s := rt.Sockets()
			d.Events.Timeout = max(d.Events.Timeout, timeout)
			switch route {
			case "$connect":
				d.Events.Connect = s.Connect
			case "$disconnect":
				d.Events.Disconnect = s.Disconnect
			case "$default":
				d.Events.Default = s.Default
				d.Events.DefaultTwoWay = t.WebSocketTwoWay[route]
			default:
				errs = append(errs, fmt.Errorf("%s: WebSocket route %s: only $connect, $disconnect and $default are served", f.ID, route))
			}
		}
		if f.Stream != nil {
			roles++
			if f.Stream.Stream != "!GetAtt "+tableID(t)+".StreamArn" {
				errs = append(errs, fmt.Errorf("%s reads the stream %s; only the table's is served", f.ID, f.Stream.Stream))
			}
			poll := o.StreamPoll
			if poll <= 0 {
				poll = 250 * time.Millisecond
			}
			o.StreamPoll = poll
			d.Pump = &Pump{Client: dynamodbstreams.NewFromConfig(o.Config), ARN: values.Attrs[tableID(t)+".StreamArn"], Source: *f.Stream,
				Handler: rt.Stream(), Region: region, Logger: o.Logger}
		}
		if f.HasURL {
			roles++
			if f.URLInvokeMode != "RESPONSE_STREAM" {
				errs = append(errs, fmt.Errorf("%s's function URL has InvokeMode %q; only RESPONSE_STREAM is served", f.ID, f.URLInvokeMode))
			}
			// An instance per invocation in flight, each on a runtime of its own (instances.go).
			d.mcp = &instances{start: func() (*awsrt.Runtime, error) { return awsrt.New(cfg, ae) }}
			d.MCP = &FunctionURL{Invoke: d.mcp.Invoke, Timeout: timeout, ForwardHost: true}
		}
		if f.ObjectCreated {
			roles++
			if d.S3 == nil {
				o.Logger.Warn("new uploads reach no checker here: against a real account, S3's events go to the deployed rule", "function", f.ID)
			} else {
				d.S3.OnObjectCreated(rt.CheckUploadEvent)
				d.buckets = append(d.buckets, ae.Bucket)
			}
		}
		for _, expr := range f.Schedules {
			roles++
			every, err := rate(expr)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", f.ID, err))
				continue
			}
			d.schedules = append(d.schedules, schedule{function: f.ID, every: every, run: rt.Sweep})
		}
		if roles == 0 {
			o.Logger.Warn("a function of template.yaml with nothing that invokes it here", "function", f.ID)
		}
	}
	switch {
	case d.Events.Connect == nil || d.Events.Disconnect == nil || d.Events.Default == nil:
		errs = append(errs, errors.New("template.yaml: the WebSocket API lacks a $connect, $disconnect or $default function"))
	case d.MCP == nil:
		errs = append(errs, errors.New("template.yaml: no function has a FunctionUrlConfig (MCP)"))
	case d.Pump == nil:
		errs = append(errs, errors.New("template.yaml: no function reads the table's stream"))
	}
	if err := errors.Join(errs...); err != nil {
		d.Close()
		return nil, fmt.Errorf("awslocal: %w", err)
	}
	d.streamPoll = o.StreamPoll
	return d, nil
}

// InstancesPath answers, on aws-local only, how many instances of the MCP function are running an
// invocation now (busy: the reserved executions in use) and how many were started:
// {"busy": 1, "started": 3}.
const InstancesPath = "/_aws-local/mcp-instances"

// Handler serves the deployment's paths on one address, as CloudFront's behaviours route them:
// the event socket to the WebSocket API, the rest of /api/, /slack/, /.well-known/, /oauth/ and /auth/ to
// the HTTP API, /mcp and /hooks/ to the
// MCP function URL, and everything else to inbox (S3 behind CloudFront on AWS).
//
// The two behaviours template.yaml gives `Compress: true` (/api/* and the default, the inbox)
// are gzipped for a client that takes it, as CloudFront compresses them at the edge: here with
// httpapi.Compress, what `loopback serve` uses (gzip only, from 1 KiB, where CloudFront also offers
// brotli from 1,000 bytes). The functions themselves never compress.
func (d *Deployment) Handler(inbox http.Handler) http.Handler {
	api := httpapi.Compress(d.API)
	mux := http.NewServeMux()
	mux.Handle("/api/v1/events", d.Events)
	mux.Handle("/api/", api)
	mux.Handle("/slack/", d.API) // CloudFront's /slack/* behaviour: Slack's requests
	// CloudFront's /.well-known/* and /oauth/* behaviours: MCP OAuth's metadata and
	// authorization server, on the HTTP API (OAuthFunction).
	mux.Handle("/.well-known/", d.API)
	mux.Handle("/oauth/", d.API)
	// CloudFront's /auth/* behaviour: single sign-on's pages (SsoFunction).
	mux.Handle("/auth/", d.API)
	mux.Handle("/mcp", d.MCP)
	mux.Handle("/hooks/", d.MCP) // CloudFront's /hooks/* behaviour: the MCP function URL
	if d.mcp != nil {
		// Not part of the deployment: what Lambda's console would show, for tests and people
		// watching waits hold and free the MCP function's reserved executions.
		mux.HandleFunc("GET "+InstancesPath, func(w http.ResponseWriter, _ *http.Request) {
			busy, started := d.mcp.counts()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"busy":%d,"started":%d}`+"\n", busy, started)
		})
	}
	mux.Handle("/", httpapi.Compress(inbox))
	if len(d.buckets) > 0 {
		mux.Handle("GET /uploads/", d.S3.Origin(d.buckets[0])) // a file read's presigned GET
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// net/http's mux answers `/api` and any path it would clean (`//api/v1/whoami`,
		// `/api/./v1/…`) with a 307 and an HTML body; AWS has no such redirect. Those go to the
		// HTTP API as they are, whose $default answers them with the API's 404 Problem.
		if p := r.URL.Path; p == "/api" || (p != httpapi.CleanPath(p) && !strings.HasPrefix(p, "/uploads/")) {
			api.ServeHTTP(w, r) // CloudFront's /api/* behaviour, or its default: both compress
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// Run reads the stream and runs the schedules until ctx ends.
func (d *Deployment) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); d.Pump.Run(ctx, d.streamPoll) }()
	for _, s := range d.schedules {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(s.every)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					if _, err := s.run(ctx); err != nil && ctx.Err() == nil {
						d.logger.Warn("scheduled function failed", "function", s.function, "err", err)
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Shutdown ends every MCP wait with the result that tells its agent to call await_reply, as
// the local binary does when it stops; Drain, after the server has shut down, lets the waits'
// bookkeeping land.
func (d *Deployment) Shutdown() { d.mcp.each(func(rt *awsrt.Runtime) { rt.App.Waiter.Shutdown() }) }

// Drain waits for the MCP waits' bookkeeping.
func (d *Deployment) Drain() { d.mcp.each(func(rt *awsrt.Runtime) { rt.App.Waiter.Drain() }) }

// Close stops the @connections endpoint and the S3 front.
func (d *Deployment) Close() {
	if d.connSrv != nil {
		d.connSrv.Close()
	}
	if d.S3 != nil {
		d.S3.Close()
	}
}

// localValues are the local answers to template.yaml's references: parameters at their
// defaults (or Options.Parameters), the table and bucket as given, other resources named
// <stack>-<logical id>, and an account of 123456789012 in the configuration's region.
func localValues(ctx context.Context, o Options) (samtemplate.Values, error) {
	t := o.Template
	region := o.Config.Region
	if region == "" {
		region = MotoRegion
	}
	stack := o.StackName
	if stack == "" {
		stack = "loopback-local"
	}
	v := samtemplate.Values{Refs: map[string]string{
		"AWS::Region": region, "AWS::AccountId": "123456789012", "AWS::Partition": "aws",
		"AWS::URLSuffix": "amazonaws.com", "AWS::StackName": stack, "AWS::NoValue": "",
	}, Attrs: map[string]string{}}
	for k, def := range t.Parameters {
		v.Refs[k] = def
	}
	for k, val := range o.Parameters {
		if _, ok := t.Parameters[k]; !ok {
			return v, fmt.Errorf("awslocal: template.yaml has no parameter %s", k)
		}
		v.Refs[k] = val
	}
	for id, typ := range t.Resources {
		name := strings.ToLower(stack + "-" + id)
		v.Refs[id] = name
		switch typ {
		case "AWS::S3::Bucket":
			v.Attrs[id+".Arn"] = "arn:aws:s3:::" + name
		case "AWS::Serverless::Function":
			v.Attrs[id+".Arn"] = "arn:aws:lambda:" + region + ":123456789012:function:" + name
		case "AWS::ApiGatewayV2::Api":
			v.Refs[id] = strings.ToLower(id) // an API ID: one DNS label
		}
	}
	table := tableID(t)
	if table == "" {
		return v, errors.New("awslocal: template.yaml has not exactly one AWS::DynamoDB::Table")
	}
	v.Refs[table] = o.Table
	out, err := dynamodb.NewFromConfig(o.Config).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(o.Table)})
	if err != nil {
		return v, fmt.Errorf("awslocal: the table %s: %w", o.Table, err)
	}
	v.Attrs[table+".Arn"] = aws.ToString(out.Table.TableArn)
	v.Attrs[table+".StreamArn"] = aws.ToString(out.Table.LatestStreamArn)
	if n := t.GlobalEnv["LOOPBACK_BUCKET"]; n != nil && n.Tag == "!Ref" {
		v.Refs[n.Value] = o.Bucket
		v.Attrs[n.Value+".Arn"] = "arn:aws:s3:::" + o.Bucket
	}
	return v, nil
}

func tableID(t *samtemplate.Template) string {
	id := ""
	for r, typ := range t.Resources {
		if typ == "AWS::DynamoDB::Table" {
			if id != "" {
				return ""
			}
			id = r
		}
	}
	return id
}

var rateExpr = regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`)

// rate reads an EventBridge rate expression; cron expressions are not served.
func rate(expr string) (time.Duration, error) {
	m := rateExpr.FindStringSubmatch(expr)
	if m == nil {
		return 0, fmt.Errorf("schedule %q: only rate(N minutes|hours|days) is served", expr)
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}[strings.TrimSuffix(m[2], "s")]
	return time.Duration(n) * unit, nil
}
