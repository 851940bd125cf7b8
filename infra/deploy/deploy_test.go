package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// These tests run `make deploy` in the repository root as a person would, with recording
// stand-ins for aws, sam and npm first on PATH: the test binary itself, under those names
// (TestMain). Each stand-in records its arguments and answers as the real CLI does, and fails as
// the real one would where the deploy could go wrong: an s3:// address with no bucket
// ("Invalid bucket name"), a reserved concurrency that leaves fewer than 100 executions
// unreserved (Lambda's refusal, which rolls the stack back), an unknown output.

// root is the repository's root, where the Makefile is.
var root = filepath.Join("..", "..")

func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "aws", "sam", "npm", "make":
		os.Exit(standIn(filepath.Base(os.Args[0]), os.Args[1:]))
	}
	os.Exit(m.Run())
}

// account is what the stand-ins answer for: the Lambda quota, what is unreserved, and what this
// stack's MCP function holds now (-1: no stack yet).
type account struct {
	Quota, Unreserved, Held int
}

// call is one recorded invocation of a stand-in.
type call struct {
	Tool string   `json:"tool"`
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
}

const (
	bucket = "loopback-inboxbucket-1x2y3z"
	distID = "E2EXAMPLE123"
)

// standIn is aws, sam or npm. Its state comes from the environment the test sets.
func standIn(tool string, args []string) int {
	dir, _ := os.Getwd()
	b, _ := json.Marshal(call{tool, args, dir})
	f, err := os.OpenFile(os.Getenv("STANDIN_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in:", err)
		return 3
	}
	fmt.Fprintf(f, "%s\n", b)
	f.Close()
	var acct account
	_ = json.Unmarshal([]byte(os.Getenv("STANDIN_ACCOUNT")), &acct)
	switch tool {
	case "npm", "make":
		return 0
	case "sam":
		return standInSam(args, acct)
	}
	// aws: every s3:// address must name a bucket, as the real CLI insists.
	for _, a := range args {
		if rest, ok := strings.CutPrefix(a, "s3://"); ok {
			if b, _, _ := strings.Cut(rest, "/"); b == "" {
				fmt.Fprintln(os.Stderr, `Parameter validation failed: Invalid bucket name "": Bucket name must match the regex "^[a-zA-Z0-9.\-_]{1,255}$"`)
				return 255
			}
		}
	}
	if len(args) < 2 {
		return 252
	}
	switch args[0] + " " + args[1] {
	case "configure get":
		fmt.Println("eu-west-1")
	case "lambda get-account-settings":
		// --query AccountLimit.[ConcurrentExecutions,UnreservedConcurrentExecutions] --output text
		switch {
		case slices.Contains(args, "AccountLimit.[ConcurrentExecutions,UnreservedConcurrentExecutions]"):
			fmt.Printf("%d\t%d\n", acct.Quota, acct.Unreserved)
		case slices.Contains(args, "AccountLimit.ConcurrentExecutions"):
			fmt.Println(acct.Quota)
		default:
			fmt.Fprintln(os.Stderr, "stand-in: unexpected query", args)
			return 252
		}
	case "cloudformation describe-stack-resource":
		if acct.Held < 0 {
			fmt.Fprintln(os.Stderr, "An error occurred (ValidationError) when calling the DescribeStackResource operation: Stack 'loopback' does not exist")
			return 254
		}
		fmt.Println("loopback-McpFunction-AbC123")
	case "lambda get-function-concurrency":
		if acct.Held <= 0 {
			fmt.Println("None")
		} else {
			fmt.Println(acct.Held)
		}
	case "cloudformation describe-stacks":
		outputs := map[string]string{
			"InboxBucketName": bucket, "DistributionId": distID,
			"InboxUrl": "https://d111example.cloudfront.net/", "McpUrl": "https://d111example.cloudfront.net/mcp",
		}
		switch {
		case slices.Contains(args, "json") && slices.Contains(args, "Stacks[0].Outputs"):
			var list []map[string]string
			for k, v := range outputs {
				list = append(list, map[string]string{"OutputKey": k, "OutputValue": v})
			}
			b, _ := json.MarshalIndent(list, "", "    ")
			fmt.Println(string(b))
		case slices.Contains(args, "text"):
			// --query "Stacks[0].Outputs[?OutputKey=='Name'].OutputValue": the value alone.
			i := slices.Index(args, "--query")
			_, key, _ := strings.Cut(args[i+1], "OutputKey=='")
			key, _, _ = strings.Cut(key, "'")
			v, ok := outputs[key]
			if !ok {
				fmt.Println("None")
				return 0
			}
			fmt.Println(v)
		default:
			fmt.Fprintln(os.Stderr, "stand-in: unexpected describe-stacks", args)
			return 252
		}
	case "s3 sync", "s3 cp":
		if args[1] == "cp" {
			if _, err := os.Stat(args[2]); err != nil {
				fmt.Fprintf(os.Stderr, "The user-provided path %s does not exist.\n", args[2])
				return 255
			}
		}
	case "cloudfront create-invalidation":
		fmt.Println(`{"Invalidation": {"Id": "I1", "Status": "InProgress"}}`)
	default:
		fmt.Fprintln(os.Stderr, "stand-in aws: unexpected", args)
		return 252
	}
	return 0
}

// standInSam: sam build succeeds; sam deploy deploys with --parameter-overrides when given (which
// replace samconfig.toml's, as the real SAM CLI does) or samconfig.toml's, over template.yaml's
// defaults, and fails as CloudFormation would when the MCP function's reservation leaves fewer
// than 100 executions unreserved. What it deployed goes to STANDIN_DEPLOYED.
func standInSam(args []string, acct account) int {
	if len(args) == 0 {
		return 2
	}
	if args[0] == "build" {
		return 0
	}
	if args[0] != "deploy" {
		return 2
	}
	params := map[string]string{}
	tmpl, err := os.ReadFile("template.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in sam: no template.yaml here")
		return 1
	}
	var doc struct {
		Parameters map[string]struct {
			Default any `yaml:"Default"`
		} `yaml:"Parameters"`
	}
	if err := yaml.Unmarshal(tmpl, &doc); err != nil {
		fmt.Fprintln(os.Stderr, "stand-in sam:", err)
		return 1
	}
	for k, p := range doc.Parameters {
		params[k] = fmt.Sprint(p.Default)
	}
	config := "samconfig.toml"
	if i := slices.Index(args, "--config-file"); i >= 0 {
		config = args[i+1]
	}
	cfg, err := readSamconfig(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in sam:", err)
		return 1
	}
	overrides := cfg.ParameterOverrides
	if i := slices.Index(args, "--parameter-overrides"); i >= 0 {
		var given []string
		for _, a := range args[i+1:] {
			if strings.HasPrefix(a, "--") {
				break
			}
			given = append(given, a)
		}
		overrides = strings.Join(given, " ")
	}
	o, err := parseOverrides(overrides)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in sam:", err)
		return 1
	}
	for _, k := range o.keys {
		if _, ok := params[k]; !ok {
			fmt.Fprintf(os.Stderr, "Error: Failed to create changeset: Parameters: [%s] do not exist in the template\n", k)
			return 1
		}
		params[k] = o.values[k]
	}
	n, _ := strconv.Atoi(params["McpReservedConcurrency"])
	if held := max(acct.Held, 0); n > 0 && acct.Unreserved+held-n < 100 {
		fmt.Fprintf(os.Stderr, "Resource handler returned message: \"Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [100].\"\n"+
			"Error: Failed to create/update the stack: loopback, Waiter StackCreateComplete failed: ROLLBACK_COMPLETE\n")
		return 1
	}
	b, _ := json.Marshal(params)
	if err := os.WriteFile(os.Getenv("STANDIN_DEPLOYED"), b, 0o600); err != nil {
		return 3
	}
	return 0
}

// deployRun is one `make deploy` under the stand-ins.
type deployRun struct {
	out      string
	err      error
	calls    []call
	deployed map[string]string // the parameters the stack got; nil when sam deploy never succeeded
}

// runDeploy runs make with the stand-ins first on PATH against acct.
func runDeploy(t *testing.T, acct account, target string, makeArgs ...string) deployRun {
	t.Helper()
	makeBin, err := exec.LookPath("make")
	if err != nil {
		if os.Getenv("LOOPBACK_REQUIRE_ALL") != "" || os.Getenv("CI") != "" {
			t.Fatal("make is not on PATH")
		}
		t.Skip("make is not on PATH: make deploy is not run")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"aws", "sam", "npm", "make"} {
		if err := os.Symlink(self, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	acctJSON, _ := json.Marshal(acct)
	logFile, deployedFile := filepath.Join(dir, "calls.jsonl"), filepath.Join(dir, "deployed.json")
	// SAM=sam: the stand-in, rather than the project's .venv-sam/bin/sam.
	args := append([]string{"--no-print-directory", target, "SAM=sam"}, makeArgs...)
	cmd := exec.Command(makeBin, args...)
	cmd.Dir = root
	// Only the environment the test means: none of make's variables from outside.
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "PATH", "GORACE", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "STACK", "REGION", "MCP_RESERVED", "STAGE", "SAMCONFIG", "SAM":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// GORACE: under -race each stand-in (this test binary) would sleep a second on exit, for
	// reports from goroutines it never starts: most of this package's time, for nothing.
	cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0",
		"STANDIN_LOG="+logFile, "STANDIN_ACCOUNT="+string(acctJSON), "STANDIN_DEPLOYED="+deployedFile)
	out, err := cmd.CombinedOutput()
	r := deployRun{out: string(out), err: err}
	if b, err := os.ReadFile(logFile); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var c call
			if json.Unmarshal([]byte(line), &c) == nil {
				r.calls = append(r.calls, c)
			}
		}
	}
	if b, err := os.ReadFile(deployedFile); err == nil {
		_ = json.Unmarshal(b, &r.deployed)
	}
	return r
}

// is reports whether c is a call of tool whose first arguments are prefix.
func (c call) is(tool string, prefix ...string) bool {
	return c.Tool == tool && len(c.Args) >= len(prefix) && slices.Equal(c.Args[:len(prefix)], prefix)
}

// index is the place of the first call of tool whose first arguments are prefix, or -1.
func (r deployRun) index(tool string, prefix ...string) int {
	return slices.IndexFunc(r.calls, func(c call) bool { return c.is(tool, prefix...) })
}

// of is the calls of one tool whose first arguments are prefix.
func (r deployRun) of(tool string, prefix ...string) []call {
	var out []call
	for _, c := range r.calls {
		if c.is(tool, prefix...) {
			out = append(out, c)
		}
	}
	return out
}

// checkFinished: the deploy ran every step after sam deploy: the inbox into the stack's bucket
// (every file the inbox's service worker and manifest included), one invalidation of the files
// never cached, the URLs printed.
func checkFinished(t *testing.T, r deployRun) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("make deploy: %v\n%s", r.err, r.out)
	}
	if len(r.of("npm", "ci")) != 1 || len(r.of("npm", "run", "build")) != 1 || len(r.of("sam", "build")) != 1 || len(r.of("sam", "deploy")) != 1 {
		t.Errorf("want npm ci, npm run build, sam build and sam deploy once each; calls: %+v", r.calls)
	}
	// The functions' packages are compiled once before sam build builds them all at once.
	if warm, build := r.index("make", "--no-print-directory", "lambda-cache"), r.index("sam", "build"); warm < 0 || warm > build {
		t.Errorf("want make lambda-cache before sam build; calls: %+v", r.calls)
	}
	for _, c := range r.of("npm") {
		if filepath.Base(c.Dir) != "web" {
			t.Errorf("npm %v ran in %s, want web/", c.Args, c.Dir)
		}
	}
	s3 := append(r.of("aws", "s3", "sync"), r.of("aws", "s3", "cp")...)
	copied := map[string]bool{}
	for _, c := range s3 {
		dest := c.Args[3]
		if !strings.HasPrefix(dest, "s3://"+bucket) {
			t.Errorf("aws %s: the destination is %q, want the stack's bucket s3://%s", strings.Join(c.Args, " "), dest, bucket)
		}
		if c.Args[1] == "cp" {
			copied[strings.TrimPrefix(dest, "s3://"+bucket)] = true
			if !slices.Contains(c.Args, "no-cache") {
				t.Errorf("aws %s: want --cache-control no-cache", strings.Join(c.Args, " "))
			}
		}
	}
	for _, f := range []string{"/index.html", "/sw.js", "/manifest.webmanifest"} {
		if !copied[f] {
			t.Errorf("%s was not uploaded to s3://%s (aws s3 calls: %+v)", f, bucket, s3)
		}
	}
	if len(r.of("aws", "s3", "sync")) != 1 {
		t.Errorf("want one aws s3 sync of the inbox, got %+v", r.of("aws", "s3", "sync"))
	}
	inv := r.of("aws", "cloudfront", "create-invalidation")
	if len(inv) != 1 || !slices.Contains(inv[0].Args, distID) || !slices.Contains(inv[0].Args, "/index.html") ||
		!slices.Contains(inv[0].Args, "/sw.js") || !slices.Contains(inv[0].Args, "/manifest.webmanifest") {
		t.Errorf("want one invalidation of /index.html /sw.js /manifest.webmanifest on %s, got %+v", distID, inv)
	}
	for _, want := range []string{"Inbox: https://d111example.cloudfront.net/", "MCP:   https://d111example.cloudfront.net/mcp", "make smoke URL=https://d111example.cloudfront.net "} {
		if !strings.Contains(r.out, want) {
			t.Errorf("make deploy printed no %q:\n%s", want, r.out)
		}
	}
}

// TestDeployNewAccount: on a new account (a quota of 10, no stack yet), plain `make deploy`
// finishes, unreserved, and says why and what to request.
func TestDeployNewAccount(t *testing.T) {
	r := runDeploy(t, account{Quota: 10, Unreserved: 10, Held: -1}, "deploy")
	checkFinished(t, r)
	if got := r.deployed["McpReservedConcurrency"]; got != "0" {
		t.Errorf("McpReservedConcurrency %q, want 0 on a quota of 10", got)
	}
	for _, want := range []string{"quota is 10", "McpReservedConcurrency=0", "L-B99A9384"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("make deploy on a new account printed no %q:\n%s", want, r.out)
		}
	}
}

// TestDeployNewAccountRoutePrinted: a reservation asked for that the account cannot spare stops
// before anything is built, naming the route; that route (MCP_RESERVED=0) then finishes.
func TestDeployNewAccountRoutePrinted(t *testing.T) {
	acct := account{Quota: 10, Unreserved: 10, Held: -1}
	r := runDeploy(t, acct, "deploy", "MCP_RESERVED=50")
	if r.err == nil || len(r.of("sam")) > 0 || len(r.of("npm")) > 0 || len(r.of("make")) > 0 {
		t.Fatalf("make deploy MCP_RESERVED=50 on a quota of 10: %v, calls %+v; want it stopped before building\n%s", r.err, r.calls, r.out)
	}
	if !strings.Contains(r.out, "make deploy MCP_RESERVED=0") || !strings.Contains(r.out, "L-B99A9384") {
		t.Errorf("the refusal names no way on:\n%s", r.out)
	}
	r = runDeploy(t, acct, "deploy", "MCP_RESERVED=0")
	checkFinished(t, r)
	if got := r.deployed["McpReservedConcurrency"]; got != "0" {
		t.Errorf("McpReservedConcurrency %q, want 0", got)
	}
	if len(r.of("aws", "lambda", "get-account-settings")) != 0 {
		t.Errorf("MCP_RESERVED=0 needs no quota: calls %+v", r.calls)
	}
}

// TestDeployUsualAccount: with the usual quota of 1000, 50 are reserved; a redeploy counts the
// MCP function's own reservation as room (it is given back first).
func TestDeployUsualAccount(t *testing.T) {
	r := runDeploy(t, account{Quota: 1000, Unreserved: 1000, Held: -1}, "deploy")
	checkFinished(t, r)
	if got := r.deployed["McpReservedConcurrency"]; got != "50" {
		t.Errorf("McpReservedConcurrency %q, want 50 on a quota of 1000", got)
	}
	if got := r.deployed["Stage"]; got != "prod" {
		t.Errorf("Stage %q, want prod (samconfig.toml)", got)
	}
	// 200 in all, 50 of them this stack's MCP function's: 150 unreserved, and 50 to reserve again.
	r = runDeploy(t, account{Quota: 200, Unreserved: 150, Held: 50}, "deploy")
	checkFinished(t, r)
	if got := r.deployed["McpReservedConcurrency"]; got != "50" {
		t.Errorf("redeploy: McpReservedConcurrency %q, want 50", got)
	}
	// 160 unreserved of which 100 stay: 60 to spare, a reservation of 60 fits, 61 does not.
	if r := runDeploy(t, account{Quota: 160, Unreserved: 160, Held: -1}, "deploy", "MCP_RESERVED=60"); r.err != nil {
		t.Errorf("MCP_RESERVED=60 with 160 unreserved: %v\n%s", r.err, r.out)
	}
	if r := runDeploy(t, account{Quota: 160, Unreserved: 160, Held: -1}, "deploy", "MCP_RESERVED=61"); r.err == nil || len(r.of("sam")) > 0 {
		t.Errorf("MCP_RESERVED=61 with 160 unreserved: want a refusal before sam, got %v\n%s", r.err, r.out)
	}
	// Between 10 and 50 to spare: all of it.
	r = runDeploy(t, account{Quota: 130, Unreserved: 130, Held: -1}, "deploy")
	checkFinished(t, r)
	if got := r.deployed["McpReservedConcurrency"]; got != "30" {
		t.Errorf("McpReservedConcurrency %q, want 30 of 130 unreserved", got)
	}
}

// TestDeployKeepsSamconfig: samconfig.toml's parameters (a custom domain, a stage, a
// reservation) reach the stack; make's own win over them.
func TestDeployKeepsSamconfig(t *testing.T) {
	config := filepath.Join(t.TempDir(), "samconfig.toml")
	err := os.WriteFile(config, []byte(`version = 0.1
[default.global.parameters]
stack_name = "loopback"

[default.deploy.parameters]
capabilities = "CAPABILITY_IAM"
parameter_overrides = "Stage=staging DomainName=loopback.example.com CertificateArn=arn:aws:acm:us-east-1:123456789012:certificate/abc PublicUrl=https://loopback.example.com LogRetentionDays=90"
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	r := runDeploy(t, account{Quota: 1000, Unreserved: 1000, Held: -1}, "deploy", "SAMCONFIG="+config)
	checkFinished(t, r)
	want := map[string]string{"Stage": "staging", "DomainName": "loopback.example.com",
		"CertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/abc", "PublicUrl": "https://loopback.example.com",
		"LogRetentionDays": "90", "McpReservedConcurrency": "50"}
	for k, v := range want {
		if r.deployed[k] != v {
			t.Errorf("%s = %q, want %q (samconfig.toml's)", k, r.deployed[k], v)
		}
	}
	for _, c := range r.of("sam") {
		if !slices.Contains(c.Args, config) {
			t.Errorf("sam %v: want --config-file %s", c.Args, config)
		}
	}
	r = runDeploy(t, account{Quota: 10, Unreserved: 10, Held: -1}, "deploy", "SAMCONFIG="+config, "STAGE=canary")
	checkFinished(t, r)
	if r.deployed["Stage"] != "canary" || r.deployed["DomainName"] != "loopback.example.com" || r.deployed["McpReservedConcurrency"] != "0" {
		t.Errorf("STAGE=canary on a new account: %v, want Stage canary, the domain kept, 0 reserved", r.deployed)
	}
}

// TestQuotaCheck: make quota-check says what make deploy would reserve, and builds nothing.
func TestQuotaCheck(t *testing.T) {
	r := runDeploy(t, account{Quota: 10, Unreserved: 10, Held: -1}, "quota-check")
	if r.err != nil || !strings.Contains(r.out, "McpReservedConcurrency=0") || len(r.of("sam")) > 0 {
		t.Errorf("make quota-check on a quota of 10: %v, calls %+v\n%s", r.err, r.calls, r.out)
	}
}

// TestReadSamconfig: parameter_overrides as a string or an array; deploy's section over global's.
func TestReadSamconfig(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[default.deploy.parameters]\nparameter_overrides = \"Stage=prod DomainName=a.example.com\"\n", "Stage=prod DomainName=a.example.com"},
		{"[default.deploy.parameters]\nparameter_overrides = [\n  \"Stage=prod\", # the stage\n  'PublicUrl=https://a.example.com',\n]\n", "Stage=prod PublicUrl=https://a.example.com"},
		{"[default.global.parameters]\nparameter_overrides = \"Stage=g\"\n[default.deploy.parameters]\nparameter_overrides = \"Stage=d\"\n", "Stage=d"},
		{"[default.global.parameters]\nparameter_overrides = \"Stage=g\"\n", "Stage=g"},
		{"[default.deploy.parameters]\nparameter_overrides = \"Stage=prod Note=\\\"two words\\\"\"\n", `Stage=prod Note="two words"`},
	} {
		p := filepath.Join(t.TempDir(), "samconfig.toml")
		if err := os.WriteFile(p, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readSamconfig(p)
		if err != nil || got.ParameterOverrides != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.text, got.ParameterOverrides, err, tc.want)
		}
	}
	o, err := parseOverrides(`Stage=prod Note="two words" ParameterKey=DomainName,ParameterValue=a.example.com`)
	if err != nil || o.get("Note") != "two words" || o.get("DomainName") != "a.example.com" || o.get("Stage") != "prod" {
		t.Fatalf("parseOverrides: %+v, %v", o, err)
	}
	if got := o.String(); got != `Stage=prod Note="two words" DomainName=a.example.com` {
		t.Errorf("args: %s", got)
	}
}
