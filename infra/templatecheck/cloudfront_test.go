package templatecheck

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/hooks"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/samtemplate"
)

// cfRequest is a CloudFront Functions viewer-request event's request; cfResult is what the
// handler returned: the request (passed on) or a response (answered at the edge).
type cfRequest struct {
	Method  string                       `json:"method"`
	URI     string                       `json:"uri"`
	Headers map[string]map[string]string `json:"headers"`
}

type cfResult struct {
	URI        string                       `json:"uri"`
	StatusCode int                          `json:"statusCode"`
	Headers    map[string]map[string]string `json:"headers"`
	Body       struct{ Data string }        `json:"body"`
}

// runCloudFrontFunction runs a CloudFront function of template.yaml (its FunctionCode, !Sub
// resolved with Stage=prod) in node on each request.
func runCloudFrontFunction(t *testing.T, id string, reqs []cfRequest) []cfResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("LOOPBACK_REQUIRE_ALL") != "" || os.Getenv("CI") != "" {
			t.Fatal("node is not on PATH: the CloudFront functions cannot be run")
		}
		t.Skip("node is not on PATH: the CloudFront functions are not run")
	}
	b, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	res := samtemplate.Get(samtemplate.Get(samtemplate.Get(samtemplate.Get(doc.Content[0], "Resources"), id), "Properties"), "FunctionCode")
	if res == nil {
		t.Fatalf("template.yaml: no %s with a FunctionCode", id)
	}
	code := strings.ReplaceAll(res.Value, "${Stage}", "prod")
	if strings.Contains(code, "${") {
		t.Fatalf("%s: a substitution this test does not resolve: %s", id, code)
	}
	in, _ := json.Marshal(reqs)
	script := code + "\nconst out = JSON.parse(process.argv[1]).map(r => handler({request: r}));\nconsole.log(JSON.stringify(out));\n"
	out, err := exec.Command(node, "-e", script, string(in)).CombinedOutput()
	if err != nil {
		t.Fatalf("%s in node: %v\n%s", id, err, out)
	}
	var results []cfResult
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("%s in node printed %s", id, out)
	}
	return results
}

// checkProblem: a response answered at the edge is the contract's Problem for its route.
func checkProblem(t *testing.T, what string, r cfResult, status int, code string) {
	t.Helper()
	if r.StatusCode != status || r.Headers["content-type"]["value"] != "application/json" {
		t.Errorf("%s: %d %v, want %d with application/json", what, r.StatusCode, r.Headers, status)
		return
	}
	if err := contract.ValidateModel("Problem", []byte(r.Body.Data)); err != nil {
		t.Errorf("%s: not a Problem: %v: %s", what, err, r.Body.Data)
	}
	var p struct{ Code, Message string }
	if json.Unmarshal([]byte(r.Body.Data), &p) != nil || p.Code != code || p.Message == "" {
		t.Errorf("%s: %s, want code %s", what, r.Body.Data, code)
	}
}

// TestForwardHostFunction: every request goes on with the viewer's host as X-Loopback-Host, the
// event socket's path becomes the WebSocket API's stage, and nothing is answered at the edge (an
// upload of any size included: on AWS uploads go to S3 by presigned PUT, not through CloudFront's
// /api/*, and the API's own limits answer everything else).
func TestForwardHostFunction(t *testing.T) {
	h := func(method, uri string, n int64) cfRequest {
		return cfRequest{Method: method, URI: uri, Headers: map[string]map[string]string{
			"host": {"value": "inbox.example.com"}, "content-length": {"value": strconv.FormatInt(n, 10)}}}
	}
	out := runCloudFrontFunction(t, "ForwardHostFunction", []cfRequest{
		h("PUT", "/api/v1/uploads/sp_x/lbu_y", 50<<20), h("POST", "/mcp", 300<<10), h("GET", "/api/v1/events", 0)})
	for i, want := range []string{"/api/v1/uploads/sp_x/lbu_y", "/mcp", "/prod"} {
		if out[i].StatusCode != 0 || out[i].URI != want || out[i].Headers["x-loopback-host"]["value"] != "inbox.example.com" {
			t.Errorf("request %d: %+v, want %s passed on with X-Loopback-Host", i, out[i], want)
		}
	}
}

// TestInboxRouteFunction: the inbox's pages are index.html, every file of the build reaches the
// bucket as it is, and any other path is the contract's 404 Problem (the bucket would answer 403
// with XML), /api without its slash included.
func TestInboxRouteFunction(t *testing.T) {
	var reqs []cfRequest
	var files []string
	dist := filepath.Join(root, "web", "dist")
	err := filepath.WalkDir(dist, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".sources-sha256" { // not uploaded (make deploy)
			return err
		}
		rel, _ := filepath.Rel(dist, p)
		files = append(files, "/"+filepath.ToSlash(rel))
		return nil
	})
	if err != nil || len(files) < 3 {
		t.Fatalf("web/dist: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		reqs = append(reqs, cfRequest{Method: "GET", URI: f})
	}
	pages := []string{"/", "/history", "/rules", "/settings", "/asks/kjr4xxjnqm4i4wuld3i6xnuzpe", "/agents", "/connect/authz_kjr4xxjnqm4i4wuld3i6xnuzpe"}
	missing := []string{"/api", "/nope.js", "/connect/a/b", "/assets/../index.html", "/mcp/x", "/.sources-sha256", "/icons/"}
	for _, p := range append(pages, missing...) {
		reqs = append(reqs, cfRequest{Method: "GET", URI: p})
	}
	out := runCloudFrontFunction(t, "InboxRouteFunction", reqs)
	for i, f := range files {
		if out[i].StatusCode != 0 || out[i].URI != f {
			t.Errorf("%s, a file of the build: %+v, want it passed on as it is", f, out[i])
		}
	}
	out = out[len(files):]
	for i, p := range pages {
		if out[i].StatusCode != 0 || out[i].URI != "/index.html" {
			t.Errorf("%s, a page of the inbox: %+v, want /index.html", p, out[i])
		}
	}
	for i, p := range missing {
		checkProblem(t, p, out[len(pages)+i], 404, httpapi.ERouteNotFound)
	}
}

// TestHooksReachTheMCPFunction: Claude Code's hooks (/hooks/claude-code) reach the MCP function
// URL, whose Lambda serves them (awsrt.MCP) and may hold a PermissionRequest for ten minutes: the
// HTTP API would cut it at 30 s. The behaviour takes POST and runs the same viewer function as
// /mcp (X-Loopback-Host).
func TestHooksReachTheMCPFunction(t *testing.T) {
	if !strings.HasPrefix(hooks.Path, "/hooks/") {
		t.Fatalf("hooks.Path is %s: the /hooks/* behaviour would not take it", hooks.Path)
	}
	b, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	dist := samtemplate.Get(samtemplate.Get(samtemplate.Get(samtemplate.Get(doc.Content[0], "Resources"), "Distribution"), "Properties"), "DistributionConfig")
	byPath := map[string]*yaml.Node{}
	for _, cb := range samtemplate.Items(samtemplate.Get(dist, "CacheBehaviors")) {
		byPath[samtemplate.Scalar(samtemplate.Get(cb, "PathPattern"))] = cb
	}
	hooksCB, mcpCB := byPath["/hooks/*"], byPath["/mcp"]
	if hooksCB == nil || mcpCB == nil {
		t.Fatalf("template.yaml: the Distribution needs CacheBehaviors /hooks/* and /mcp (have %v)", slices.Collect(maps.Keys(byPath)))
	}
	origin := samtemplate.Scalar(samtemplate.Get(hooksCB, "TargetOriginId"))
	if want := samtemplate.Scalar(samtemplate.Get(mcpCB, "TargetOriginId")); origin != want {
		t.Errorf("template.yaml: /hooks/* goes to origin %q, want /mcp's %q (the MCP function URL)", origin, want)
	}
	var methods []string
	for _, m := range samtemplate.Items(samtemplate.Get(hooksCB, "AllowedMethods")) {
		methods = append(methods, samtemplate.Scalar(m))
	}
	if !slices.Contains(methods, "POST") {
		t.Errorf("template.yaml: /hooks/* allows %v: a hook POSTs", methods)
	}
	fn := func(cb *yaml.Node) string {
		items := samtemplate.Items(samtemplate.Get(cb, "FunctionAssociations"))
		if len(items) == 0 {
			return ""
		}
		return samtemplate.Get(items[0], "FunctionARN").Value + fmt.Sprint(samtemplate.Get(items[0], "FunctionARN").Tag)
	}
	if fn(hooksCB) != fn(mcpCB) {
		t.Errorf("template.yaml: /hooks/* runs viewer function %q, want /mcp's %q", fn(hooksCB), fn(mcpCB))
	}
}

// TestCloudFrontCompresses: the inbox and the API's JSON are compressed at the edge (Compress on
// the behaviour, and Accept-Encoding in its cache policy, without which CloudFront compresses
// nothing); the event socket, /mcp and /hooks/* are not, since they stream.
func TestCloudFrontCompresses(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	resources := samtemplate.Get(doc.Content[0], "Resources")
	dist := samtemplate.Get(samtemplate.Get(samtemplate.Get(resources, "Distribution"), "Properties"), "DistributionConfig")
	byPath := map[string]*yaml.Node{"default": samtemplate.Get(dist, "DefaultCacheBehavior")}
	for _, cb := range samtemplate.Items(samtemplate.Get(dist, "CacheBehaviors")) {
		byPath[samtemplate.Scalar(samtemplate.Get(cb, "PathPattern"))] = cb
	}
	// A managed policy (an id, not a !Ref) is CachingOptimized, which takes gzip and brotli.
	acceptsEncoding := func(cb *yaml.Node) bool {
		ref := samtemplate.Get(cb, "CachePolicyId")
		if ref == nil || ref.Tag != "!Ref" {
			return ref != nil && ref.Value == "658327ea-f89d-4fab-a63d-7e88639e58f6"
		}
		params := samtemplate.Get(samtemplate.Get(samtemplate.Get(samtemplate.Get(resources, ref.Value), "Properties"), "CachePolicyConfig"), "ParametersInCacheKeyAndForwardedToOrigin")
		return samtemplate.Scalar(samtemplate.Get(params, "EnableAcceptEncodingGzip")) == "true"
	}
	for path, want := range map[string]bool{"default": true, "/api/*": true, "/api/v1/events": false, "/mcp": false, "/hooks/*": false} {
		cb := byPath[path]
		if cb == nil {
			t.Fatalf("template.yaml: no cache behaviour %s", path)
		}
		got := samtemplate.Scalar(samtemplate.Get(cb, "Compress")) == "true"
		if got != want {
			t.Errorf("template.yaml: %s has Compress %v, want %v", path, got, want)
		}
		if want && !acceptsEncoding(cb) {
			t.Errorf("template.yaml: %s compresses, but its cache policy leaves Accept-Encoding out (CloudFront then compresses nothing)", path)
		}
	}
}
