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

	"go.yaml.in/yaml/v3"

	"github.com/loopback-hq/loopback/shared/httpapi"
)

// root is the repository's root, where template.yaml and the Makefile are.
var root = filepath.Join("..", "..")

// TestRoutesHaveTheirFunctions: every route of httpapi.Routes is one HttpApi event of one
// function in template.yaml, and every HttpApi event is a route (or HEAD of a GET route, or the
// $default fall-through). The event socket is the WebSocket API's, behind CloudFront's path.
func TestRoutesHaveTheirFunctions(t *testing.T) {
	tmpl := loadTemplate(t)
	events := map[string][]string{} // "METHOD path" → the functions with that event
	for _, f := range tmpl.functions {
		for _, e := range f.events {
			if e.apiID != "!Ref HttpApi" {
				t.Errorf("template.yaml: %s's event %s (%s) is on ApiId %q, want !Ref HttpApi", f.id, e.name, e.key(), e.apiID)
			}
			events[e.key()] = append(events[e.key()], f.id)
		}
	}
	routes := map[string]bool{}
	for _, r := range httpapi.Routes() {
		key := r.Method + " " + apiGatewayPath(r.Pattern)
		routes[key] = true
		fns := events[key]
		switch {
		case r.Socket && len(fns) > 0:
			t.Errorf("template.yaml: %s is the event socket (the WebSocket API), but %s routes it on the HTTP API", key, strings.Join(fns, ", "))
		case r.Socket:
			if !tmpl.hasWebSocketAPI {
				t.Errorf("template.yaml: %s is the event socket, but the template has no AWS::ApiGatewayV2::Api with ProtocolType WEBSOCKET", key)
			}
			if !slices.Contains(tmpl.cachePaths, r.Pattern) {
				t.Errorf("template.yaml: %s is the event socket, but the Distribution has no CacheBehavior with PathPattern %s (CloudFront would send it to the HTTP API)", key, r.Pattern)
			}
		case len(fns) == 0:
			t.Errorf("template.yaml: no function has an HttpApi event for %s (shared/httpapi's route table serves it; on AWS it would fall through to the $default function): add a function with Events: {Type: HttpApi, Properties: {ApiId: !Ref HttpApi, Method: %s, Path: %s}}", key, r.Method, apiGatewayPath(r.Pattern))
		case len(fns) > 1:
			t.Errorf("template.yaml: %s is an HttpApi event of %d functions (%s); want one", key, len(fns), strings.Join(fns, ", "))
		}
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

// TestFunctionsAreBuilt: the Makefile's LAMBDA_DIRS names exactly the template's functions, each
// with an existing main package under functions/, and each function is built by the Makefile
// (BuildMethod makefile, CodeUri .) through its build-<LogicalId> target.
func TestFunctionsAreBuilt(t *testing.T) {
	tmpl := loadTemplate(t)
	dirs := makefileLambdaDirs(t)

	var inTemplate []string
	for _, f := range tmpl.functions {
		inTemplate = append(inTemplate, f.id)
		if _, ok := dirs[f.id]; !ok {
			t.Errorf("Makefile: LAMBDA_DIRS has no %s (template.yaml's AWS::Serverless::Function): add a line `%s=<folder under functions/>`", f.id, f.id)
		}
		if f.buildMethod != "makefile" {
			t.Errorf("template.yaml: %s has Metadata BuildMethod %q, want makefile (the Makefile's build-%s)", f.id, f.buildMethod, f.id)
		}
		if f.codeURI != "." {
			t.Errorf("template.yaml: %s has CodeUri %q, want . (the repository root, where the Makefile is)", f.id, f.codeURI)
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
		if other, ok := used[dir]; ok {
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
	byRoute := map[string]*function{}
	var fallback *function
	for _, f := range tmpl.functions {
		for _, e := range f.events {
			byRoute[e.key()] = f
			if e.key() == "ANY $default" {
				fallback = f
			}
		}
	}
	// Actions a route needs besides the credential checks, which the handler's code decides.
	needs := map[string][]string{
		"GET /api/v1/files/{uploadId}":          {"s3:GetObject"},
		"PUT /api/v1/uploads/{spaceId}/{token}": {"s3:PutObject", "dynamodb:UpdateItem"},
		"GET /api/v1/push/key":                  {"ssm:GetParameter"},
		"POST /api/v1/asks/{id}/reply":          {"dynamodb:PutItem"},
		"POST /api/v1/events/tickets":           {"dynamodb:PutItem"},
	}

	if fallback != nil {
		if w := fallback.writes(); len(w) > 0 {
			t.Errorf("template.yaml: the $default function %s is allowed to write (%s); it must stay read-only, since any route left out of the template falls through to it", fallback.id, strings.Join(w, ", "))
		}
	}
	for _, f := range tmpl.functions {
		if len(f.events) == 0 {
			continue
		}
		readsOnly := true
		for _, e := range f.events {
			if e.method != "GET" && e.method != "HEAD" {
				readsOnly = false
			}
		}
		if w := f.writes(); readsOnly && len(w) > 0 {
			t.Errorf("template.yaml: %s serves only reading routes (%s) but is allowed to write: %s", f.id, f.routeList(), strings.Join(w, ", "))
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
			if len(f.writes()) == 0 {
				t.Errorf("template.yaml: %s writes, but its function %s is allowed no write (its policy: %s)", key, f.id, f.actionList())
			}
		}
		if r.Gated {
			for _, a := range []string{"dynamodb:GetItem", "dynamodb:UpdateItem"} {
				if !f.allows(a) {
					t.Errorf("template.yaml: %s takes a bearer credential, which the gate reads and records as used, but %s is not allowed %s", key, f.id, a)
				}
			}
		}
		for _, a := range needs[key] {
			if !f.allows(a) {
				t.Errorf("template.yaml: %s needs %s, which its function %s is not allowed", key, a, f.id)
			}
		}
		if r.Method == "GET" && fallback != nil && byRoute["HEAD "+apiGatewayPath(r.Pattern)] == nil {
			for _, s := range f.statements {
				if s.isWrite() {
					continue
				}
				if !fallback.hasStatement(s) {
					t.Errorf("template.yaml: HEAD %s falls through to %s (no function has a HEAD event for it), which is not allowed what %s is: %s; add a HEAD event to %s, or allow it there too", apiGatewayPath(r.Pattern), fallback.id, f.id, s, f.id)
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

// --- template.yaml ---------------------------------------------------------------------------

type template struct {
	functions       []*function // AWS::Serverless::Function, in the template's order
	hasWebSocketAPI bool
	cachePaths      []string // the Distribution's CacheBehaviors' PathPatterns
}

type function struct {
	id, buildMethod, codeURI string
	events                   []event // HttpApi events only
	statements               []statement
}

type event struct{ name, method, path, apiID string }

func (e event) key() string { return strings.ToUpper(e.method) + " " + e.path }

// statement is one Allow statement of a function's policy, its actions one by one (or a SAM
// policy template, by name, as its one action).
type statement struct {
	actions   []string
	resource  string
	condition string
}

func (s statement) String() string {
	out := strings.Join(s.actions, ", ") + " on " + s.resource
	if s.condition != "" {
		out += " if " + s.condition
	}
	return out
}

// gateTouch: an UpdateItem limited to a credential's lastUsedAt (and its keys), as the gate does.
var gateTouch = regexp.MustCompile(`dynamodb:Attributes: \[((pk|sk|lastUsedAt)(, )?)+\]`)

func (s statement) isWrite() bool {
	for _, a := range s.actions {
		if writeAction(a) && !(a == "dynamodb:UpdateItem" && gateTouch.MatchString(s.condition)) {
			return true
		}
	}
	return false
}

func writeAction(a string) bool {
	service, verb, _ := strings.Cut(a, ":")
	if strings.HasPrefix(service, "sam:") || service == "sam" {
		return !strings.Contains(verb, "Read")
	}
	if verb == "*" || a == "*" {
		return true
	}
	for _, w := range []string{"Put", "Update", "Delete", "BatchWrite", "TransactWrite", "Create", "ManageConnections"} {
		if strings.HasPrefix(verb, w) {
			return true
		}
	}
	return false
}

func (f *function) writes() []string {
	var out []string
	for _, s := range f.statements {
		if s.isWrite() {
			out = append(out, s.String())
		}
	}
	return out
}

func (f *function) allows(action string) bool {
	for _, s := range f.statements {
		if slices.Contains(s.actions, action) || slices.Contains(s.actions, "*") {
			return true
		}
	}
	return false
}

// hasStatement reports whether f allows every action of s on s's resource, under s's condition.
func (f *function) hasStatement(s statement) bool {
	for _, a := range s.actions {
		found := false
		for _, o := range f.statements {
			if slices.Contains(o.actions, a) && o.resource == s.resource && o.condition == s.condition {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (f *function) actionList() string {
	var out []string
	for _, s := range f.statements {
		out = append(out, s.String())
	}
	return strings.Join(out, "; ")
}

func (f *function) routeList() string {
	var out []string
	for _, e := range f.events {
		out = append(out, e.key())
	}
	return strings.Join(out, ", ")
}

// loadTemplate reads template.yaml as YAML nodes, so CloudFormation's short forms (!Ref, !GetAtt,
// !Sub, !If …) are kept as tagged nodes rather than refused.
func loadTemplate(t *testing.T) *template {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	if len(doc.Content) != 1 {
		t.Fatal("template.yaml: not one YAML document")
	}
	resources := get(doc.Content[0], "Resources")
	if resources == nil || resources.Kind != yaml.MappingNode {
		t.Fatal("template.yaml: no Resources")
	}
	tmpl := &template{}
	for i := 0; i+1 < len(resources.Content); i += 2 {
		id, res := resources.Content[i].Value, resources.Content[i+1]
		props := get(res, "Properties")
		switch scalar(get(res, "Type")) {
		case "AWS::Serverless::Function":
			f := &function{id: id, buildMethod: scalar(get(get(res, "Metadata"), "BuildMethod")), codeURI: scalar(get(props, "CodeUri"))}
			evs := get(props, "Events")
			for j := 0; evs != nil && j+1 < len(evs.Content); j += 2 {
				ev := evs.Content[j+1]
				if scalar(get(ev, "Type")) != "HttpApi" {
					continue
				}
				p := get(ev, "Properties")
				f.events = append(f.events, event{name: evs.Content[j].Value, method: scalar(get(p, "Method")), path: scalar(get(p, "Path")), apiID: render(get(p, "ApiId"))})
			}
			f.statements = policyStatements(t, id, get(props, "Policies"))
			tmpl.functions = append(tmpl.functions, f)
		case "AWS::ApiGatewayV2::Api":
			if scalar(get(props, "ProtocolType")) == "WEBSOCKET" {
				tmpl.hasWebSocketAPI = true
			}
		case "AWS::CloudFront::Distribution":
			behaviors := get(get(props, "DistributionConfig"), "CacheBehaviors")
			for _, cb := range items(behaviors) {
				tmpl.cachePaths = append(tmpl.cachePaths, scalar(get(cb, "PathPattern")))
			}
		}
	}
	if len(tmpl.functions) == 0 {
		t.Fatal("template.yaml: no AWS::Serverless::Function")
	}
	return tmpl
}

func policyStatements(t *testing.T, id string, policies *yaml.Node) []statement {
	var out []statement
	for _, p := range items(policies) {
		switch {
		case p.Kind == yaml.ScalarNode: // a managed policy by name or ARN
			out = append(out, statement{actions: []string{"sam:" + render(p)}, resource: "*"})
		case get(p, "Statement") != nil:
			for _, s := range items(get(p, "Statement")) {
				if scalar(get(s, "Effect")) != "Allow" {
					continue
				}
				st := statement{resource: render(get(s, "Resource")), condition: render(get(s, "Condition"))}
				for _, a := range items(get(s, "Action")) {
					st.actions = append(st.actions, scalar(a))
				}
				out = append(out, st)
			}
		case p.Kind == yaml.MappingNode && len(p.Content) == 2: // a SAM policy template
			out = append(out, statement{actions: []string{"sam:" + p.Content[0].Value}, resource: render(p.Content[1])})
		default:
			t.Errorf("template.yaml: %s has a policy this check does not understand: %s", id, render(p))
		}
	}
	return out
}

// get is a mapping node's value for key, or nil.
func get(n *yaml.Node, key string) *yaml.Node {
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

// items is a sequence's items, or a lone node as one item.
func items(n *yaml.Node) []*yaml.Node {
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.SequenceNode:
		return n.Content
	default:
		return []*yaml.Node{n}
	}
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// render writes a node on one line, with its CloudFormation tag: !GetAtt AskTable.Arn,
// [pk, sk], {dynamodb:Attributes: [pk, sk, lastUsedAt]}.
func render(n *yaml.Node) string {
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
			parts = append(parts, render(c))
		}
		if len(parts) == 1 && tag == "" {
			return parts[0] // Resource: [x] is Resource: x
		}
		return tag + "[" + strings.Join(parts, ", ") + "]"
	case yaml.MappingNode:
		var parts []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			parts = append(parts, n.Content[i].Value+": "+render(n.Content[i+1]))
		}
		return tag + "{" + strings.Join(parts, ", ") + "}"
	case yaml.AliasNode:
		return render(n.Alias)
	}
	return ""
}
