package templatecheck

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/oauth"
	"github.com/loopback-hq/loopback/shared/samtemplate"
	"github.com/loopback-hq/loopback/shared/slack"
	"github.com/loopback-hq/loopback/shared/sso"
)

// root is the repository's root, where template.yaml and the Makefile are.
var root = filepath.Join("..", "..")

// TestRoutesHaveTheirFunctions: every route of httpapi.Routes is one HttpApi event of one
// function in template.yaml, and every HttpApi event is a route (or HEAD of a GET route, or the
// $default fall-through). The event socket is the WebSocket API's, behind CloudFront's path.
func TestRoutesHaveTheirFunctions(t *testing.T) {
	tmpl := loadTemplate(t)
	events := map[string][]string{} // "METHOD path" → the functions with that event
	for _, f := range tmpl.Functions {
		for _, e := range f.Events {
			if e.APIID != "!Ref HttpApi" {
				t.Errorf("template.yaml: %s's event %s (%s) is on ApiId %q, want !Ref HttpApi", f.ID, e.Name, e.Key(), e.APIID)
			}
			events[e.Key()] = append(events[e.Key()], f.ID)
		}
	}
	routes := map[string]bool{}
	for _, r := range httpapi.Routes() {
		key := r.Method + " " + apiGatewayPath(r.Pattern)
		routes[key] = true
		fns := events[key]
		switch {
		case localOnly[key] != "" && len(fns) > 0:
			t.Errorf("template.yaml: %s routes %s, which is served only by the local binary (%s): remove the event", strings.Join(fns, ", "), key, localOnly[key])
		case localOnly[key] != "":
			// On AWS it falls through to $default, whose answer is the route's own 404.
		case r.Socket && len(fns) > 0:
			t.Errorf("template.yaml: %s is the event socket (the WebSocket API), but %s routes it on the HTTP API", key, strings.Join(fns, ", "))
		case r.Socket:
			if !tmpl.HasWebSocketAPI {
				t.Errorf("template.yaml: %s is the event socket, but the template has no AWS::ApiGatewayV2::Api with ProtocolType WEBSOCKET", key)
			}
			if !slices.Contains(tmpl.CachePaths, r.Pattern) {
				t.Errorf("template.yaml: %s is the event socket, but the Distribution has no CacheBehavior with PathPattern %s (CloudFront would send it to the HTTP API)", key, r.Pattern)
			}
		case len(fns) == 0:
			t.Errorf("template.yaml: no function has an HttpApi event for %s (shared/httpapi's route table serves it; on AWS it would fall through to the $default function): add a function with Events: {Type: HttpApi, Properties: {ApiId: !Ref HttpApi, Method: %s, Path: %s}}", key, r.Method, apiGatewayPath(r.Pattern))
		case len(fns) > 1:
			t.Errorf("template.yaml: %s is an HttpApi event of %d functions (%s); want one", key, len(fns), strings.Join(fns, ", "))
		}
	}
	// Slack's requests (shared/slack's Handler, not the contract's API): one function each, and
	// CloudFront sends /slack/* to the HTTP API.
	for _, key := range []string{"POST " + slack.PathInteractivity, "POST " + slack.PathCommands, "POST " + slack.PathInstall, "GET " + slack.PathOAuthCallback} {
		routes[key] = true
		if fns := events[key]; len(fns) != 1 {
			t.Errorf("template.yaml: %s (Slack's requests) is an HttpApi event of %d functions (%v); want one", key, len(fns), fns)
		}
	}
	// MCP OAuth's endpoints (shared/oauth's Handler, OAuth's wire formats): one function each,
	// and CloudFront sends /.well-known/* and /oauth/* to the HTTP API.
	for _, key := range oauthRoutes {
		routes[key] = true
		if fns := events[key]; len(fns) != 1 || fns[0] != "OAuthFunction" {
			t.Errorf("template.yaml: %s (MCP OAuth) is an HttpApi event of %v; want OAuthFunction's only", key, fns)
		}
	}
	for _, p := range []string{"/.well-known/*", "/oauth/*"} {
		if !slices.Contains(tmpl.CachePaths, p) {
			t.Errorf("template.yaml: the Distribution has no CacheBehavior with PathPattern %s (MCP OAuth would reach the inbox's bucket)", p)
		}
	}
	// Single sign-on's pages (shared/sso's Handler, OpenID Connect's redirects): SsoFunction's,
	// and CloudFront sends /auth/* to the HTTP API.
	for _, p := range sso.Paths() {
		key := "GET " + p
		routes[key] = true
		if fns := events[key]; len(fns) != 1 || fns[0] != "SsoFunction" {
			t.Errorf("template.yaml: %s (single sign-on) is an HttpApi event of %v; want SsoFunction's only", key, fns)
		}
	}
	if !slices.Contains(tmpl.CachePaths, "/auth/*") {
		t.Errorf("template.yaml: the Distribution has no CacheBehavior with PathPattern /auth/* (single sign-on's callback would reach the inbox's bucket)")
	}
	if !slices.Contains(tmpl.CachePaths, "/slack/*") {
		t.Errorf("template.yaml: the Distribution has no CacheBehavior with PathPattern /slack/* (Slack's requests would reach the inbox's bucket)")
	}
	defaults := 0
	for key, fns := range events {
		method, path, _ := strings.Cut(key, " ")
		switch {
		case routes[key]:
		case key == "ANY $default":
			defaults += len(fns)
		case method == "HEAD" && routes["GET "+path]:
			// HEAD of a GET route, on a function of its own rather than $default's.
		default:
			t.Errorf("template.yaml: %s routes %s, which is not in shared/httpapi's route table (httpapi.Routes): remove the event, or add the route", strings.Join(fns, ", "), key)
		}
	}
	if defaults != 1 {
		t.Errorf("template.yaml: %d functions have the HttpApi event ANY $default, want one (the contract's 404 and 405 Problems)", defaults)
	}
}

// localOnly are the routes of shared/httpapi that only the local binary serves, and why: on AWS
// they fall through to the $default function, which answers them as the local binary answers an
// address that names nothing.
var localOnly = map[string]string{
	"PUT /api/v1/uploads/{spaceId}/{token}": "on AWS an upload ticket is a presigned S3 PUT (upload.Service.Direct) whose token is never given out, so no address of this route names a ticket there",
}

// oauthRoutes are MCP OAuth's endpoints as HTTP API routes (shared/oauth.Paths, with their
// methods), and the CORS preflights of the two prefixes.
var oauthRoutes = []string{
	"GET " + oauth.PathResourceMetadata, "GET " + oauth.PathResourceMetadataMCP, "GET " + oauth.PathServerMetadata,
	"GET " + oauth.PathAuthorize, "GET " + oauth.PathContinue,
	"POST " + oauth.PathToken, "POST " + oauth.PathRegister, "POST " + oauth.PathRevoke,
	"OPTIONS /.well-known/{proxy+}", "OPTIONS /oauth/{proxy+}",
}

// apiDir is the one main package every function of the HTTP API runs (a function per route, so
// that each has a role of its own).
const apiDir = "api"

// TestFunctionsAreBuilt: the Makefile's LAMBDA_DIRS names exactly the template's functions, each
// with an existing main package under functions/: functions/api for every function with HttpApi
// events, a folder of its own for every other one. Each function is built by the Makefile
// (BuildMethod makefile, CodeUri .) through its build-<LogicalId> target.
func TestFunctionsAreBuilt(t *testing.T) {
	tmpl := loadTemplate(t)
	dirs := makefileLambdaDirs(t)

	var inTemplate []string
	api := map[string]bool{} // the functions of the HTTP API
	for _, f := range tmpl.Functions {
		inTemplate = append(inTemplate, f.ID)
		api[f.ID] = len(f.Events) > 0
		if _, ok := dirs[f.ID]; !ok {
			t.Errorf("Makefile: LAMBDA_DIRS has no %s (template.yaml's AWS::Serverless::Function): add a line `%s=<folder under functions/>`", f.ID, f.ID)
		}
		if f.BuildMethod != "makefile" {
			t.Errorf("template.yaml: %s has Metadata BuildMethod %q, want makefile (the Makefile's build-%s)", f.ID, f.BuildMethod, f.ID)
		}
		if f.CodeURI != "." {
			t.Errorf("template.yaml: %s has CodeUri %q, want . (the repository root, where the Makefile is)", f.ID, f.CodeURI)
		}
	}
	used := map[string]string{}
	var ids []string
	for id := range dirs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		dir := dirs[id]
		if !slices.Contains(inTemplate, id) {
			t.Errorf("Makefile: LAMBDA_DIRS has %s=%s, which is not an AWS::Serverless::Function of template.yaml", id, dir)
		}
		switch other, ok := used[dir]; {
		case api[id] && dir != apiDir:
			t.Errorf("Makefile: LAMBDA_DIRS builds %s, a function of the HTTP API, from functions/%s; want %s=%s (every API function runs the one main)", id, dir, id, apiDir)
		case !api[id] && dir == apiDir:
			t.Errorf("Makefile: LAMBDA_DIRS builds %s from functions/%s, which is the HTTP API's; %s has no HttpApi event", id, dir, id)
		case ok && !api[id]:
			t.Errorf("Makefile: LAMBDA_DIRS builds %s and %s from the same functions/%s", other, id, dir)
		}
		used[dir] = id
		if err := mainPackage(filepath.Join(root, "functions", dir)); err != nil {
			t.Errorf("Makefile: LAMBDA_DIRS builds %s from functions/%s: %v", id, dir, err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := used[e.Name()]; e.IsDir() && !ok {
			t.Errorf("functions/%s is no function's: add it to the Makefile's LAMBDA_DIRS and template.yaml, or remove it", e.Name())
		}
	}

	// What each build-<LogicalId> target runs, as sam build would run it.
	makeBin, err := exec.LookPath("make")
	if err != nil {
		if os.Getenv("LOOPBACK_REQUIRE_ALL") != "" || os.Getenv("CI") != "" {
			t.Fatalf("make is not on PATH: install make (Debian: apt-get install make)")
		}
		t.Skip("make is not on PATH, so the build-<LogicalId> targets are not checked: install make (Debian: apt-get install make)")
	}
	for _, id := range ids {
		cmd := exec.Command(makeBin, "--no-print-directory", "-n", "build-"+id, "ARTIFACTS_DIR=/artifacts")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("make -n build-%s (what sam build runs for %s): %v\n%s", id, id, err, out)
			continue
		}
		if want := "-o /artifacts/bootstrap ./functions/" + dirs[id]; !strings.Contains(string(out), want) {
			t.Errorf("make -n build-%s runs\n%s\nwant a go build with %q", id, out, want)
		}
	}
}

// TestPoliciesCoverRoutes: each function's policy allows what its routes need, and no more
// than a reading route should have.
//
//   - a route that writes (POST, PUT, PATCH, DELETE) is on a function allowed some write;
//   - a function whose routes only read (GET, HEAD) writes nothing beyond the gate's record of
//     when a credential was last used, and the $default function neither;
//   - a gated route's function can read credentials (dynamodb:GetItem) and record their use
//     (dynamodb:UpdateItem);
//   - HEAD of a GET route without a HEAD event of its own falls through to $default, so
//     $default must allow everything the GET route's function does (writes aside);
//   - the few actions routes need beyond the table (needs below).
func TestPoliciesCoverRoutes(t *testing.T) {
	tmpl := loadTemplate(t)
	byRoute := map[string]*samtemplate.Function{}
	var fallback *samtemplate.Function
	for _, f := range tmpl.Functions {
		for _, e := range f.Events {
			byRoute[e.Key()] = f
			if e.Key() == "ANY $default" {
				fallback = f
			}
		}
	}
	// Actions a route needs besides the credential checks, which the handler's code decides.
	needs := map[string][]string{
		"GET /api/v1/files/{uploadId}":           {"s3:GetObject"},
		"GET /api/v1/push/key":                   {"ssm:GetParameter"},
		"POST /api/v1/push/subscriptions":        {"dynamodb:Query"},
		"DELETE /api/v1/push/subscriptions/{id}": {"dynamodb:Query"},
		"POST /api/v1/asks/{id}/reply":           {"dynamodb:PutItem"},
		"POST /api/v1/asks/{id}/dismiss":         {"dynamodb:PutItem"},
		"PUT /api/v1/asks/{id}/mark":             {"dynamodb:PutItem"},
		"GET /api/v1/marks":                      {"dynamodb:Query"},
		"POST /api/v1/events/tickets":            {"dynamodb:PutItem"},
	}

	if fallback != nil {
		if w := fallback.Writes(); len(w) > 0 {
			t.Errorf("template.yaml: the $default function %s is allowed to write (%s); it must stay read-only, since any route left out of the template falls through to it", fallback.ID, strings.Join(w, ", "))
		}
	}
	for _, f := range tmpl.Functions {
		if len(f.Events) == 0 {
			continue
		}
		readsOnly := true
		for _, e := range f.Events {
			if e.Method != "GET" && e.Method != "HEAD" {
				readsOnly = false
			}
		}
		if w := f.Writes(); readsOnly && len(w) > 0 {
			t.Errorf("template.yaml: %s serves only reading routes (%s) but is allowed to write: %s", f.ID, f.RouteList(), strings.Join(w, ", "))
		}
	}
	for _, r := range httpapi.Routes() {
		if r.Socket {
			continue
		}
		key := r.Method + " " + apiGatewayPath(r.Pattern)
		f := byRoute[key]
		if f == nil {
			continue // TestRoutesHaveTheirFunctions names it
		}
		switch r.Method {
		case "POST", "PUT", "PATCH", "DELETE":
			if len(f.Writes()) == 0 {
				t.Errorf("template.yaml: %s writes, but its function %s is allowed no write (its policy: %s)", key, f.ID, f.ActionList())
			}
		}
		if r.Gated {
			for _, a := range []string{"dynamodb:GetItem", "dynamodb:UpdateItem"} {
				if !f.Allows(a) {
					t.Errorf("template.yaml: %s takes a bearer credential, which the gate reads and records as used, but %s is not allowed %s", key, f.ID, a)
				}
			}
			if !f.CountsSignIns() {
				t.Errorf("template.yaml: %s takes a bearer credential, whose failures the gate counts in SIGNIN# items, but %s may not update them", key, f.ID)
			}
		}
		for _, a := range needs[key] {
			if !f.Allows(a) {
				t.Errorf("template.yaml: %s needs %s, which its function %s is not allowed", key, a, f.ID)
			}
		}
		if r.Method == "GET" && fallback != nil && byRoute["HEAD "+apiGatewayPath(r.Pattern)] == nil {
			for _, s := range f.Statements {
				if s.IsWrite() {
					continue
				}
				if !fallback.HasStatement(s) {
					t.Errorf("template.yaml: HEAD %s falls through to %s (no function has a HEAD event for it), which is not allowed what %s is: %s; add a HEAD event to %s, or allow it there too", apiGatewayPath(r.Pattern), fallback.ID, f.ID, s, f.ID)
				}
			}
		}
	}
}

// apiGatewayPath turns a net/http pattern into API Gateway's path: {rest...} is {rest+}.
func apiGatewayPath(pattern string) string {
	pattern = strings.TrimSuffix(pattern, "{$}")
	return regexp.MustCompile(`\{(\w+)\.\.\.\}`).ReplaceAllString(pattern, "{$1+}")
}

// mainPackage reports whether dir holds a main package with a func main.
func mainPackage(dir string) error {
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		return err
	}
	if pkg.Name != "main" {
		return fmt.Errorf("package %s there, not main", pkg.Name)
	}
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "main" {
				return nil
			}
		}
	}
	return fmt.Errorf("package main has no func main")
}

// makefileLambdaDirs reads the Makefile's LAMBDA_DIRS: LogicalId=folder pairs.
func makefileLambdaDirs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	m := regexp.MustCompile(`(?m)^LAMBDA_DIRS\s*:?=(.*)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("Makefile: no LAMBDA_DIRS = LogicalId=folder ... (the functions sam build builds)")
	}
	dirs := map[string]string{}
	for _, pair := range strings.Fields(m[1]) {
		id, dir, ok := strings.Cut(pair, "=")
		if !ok || id == "" || dir == "" {
			t.Errorf("Makefile: LAMBDA_DIRS has %q, want LogicalId=folder", pair)
			continue
		}
		if _, dup := dirs[id]; dup {
			t.Errorf("Makefile: LAMBDA_DIRS names %s twice", id)
		}
		dirs[id] = dir
	}
	return dirs
}

// loadTemplate reads template.yaml (shared/samtemplate, the reader aws-local runs it with too).
func loadTemplate(t *testing.T) *samtemplate.Template {
	t.Helper()
	tmpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// TestSocketRepliesShareTheReplyFunction: the event socket's $default (a reply sent on the socket,
// contract revision 8) is served by the function of POST /api/v1/asks/{id}/reply and PUT
// /api/v1/asks/{id}/mark, so the reply lands where the inbox's mark of the ask has just warmed an
// instance (awsrt.Runtime.Gateway). functions/api serves no other WebSocket route; $connect and
// $disconnect keep functions of their own. The route is two-way: its response is the answer.
func TestSocketRepliesShareTheReplyFunction(t *testing.T) {
	tmpl := loadTemplate(t)
	dirs := makefileLambdaDirs(t)
	keys := map[string]map[string]bool{} // function → its HttpApi events' keys
	for _, f := range tmpl.Functions {
		keys[f.ID] = map[string]bool{}
		for _, e := range f.Events {
			keys[f.ID][e.Key()] = true
		}
	}
	fn := tmpl.WebSocketRoutes["$default"]
	if !tmpl.WebSocketTwoWay["$default"] {
		t.Errorf("template.yaml: the WebSocket $default route has no route response (RouteResponseSelectionExpression and an AWS::ApiGatewayV2::RouteResponse): API Gateway would drop the answer to a reply sent on the socket")
	}
	for _, want := range []string{"POST /api/v1/asks/{id}/reply", "PUT /api/v1/asks/{id}/mark"} {
		if !keys[fn][want] {
			t.Errorf("template.yaml: the WebSocket $default route invokes %q, which does not serve %s; give it to the function that does", fn, want)
		}
	}
	for route, fn := range tmpl.WebSocketRoutes {
		if route != "$default" && dirs[fn] == apiDir {
			t.Errorf("template.yaml: the WebSocket route %s invokes %s, which runs functions/%s; that main serves only $default", route, fn, apiDir)
		}
	}
}
