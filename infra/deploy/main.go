// Command deploy is `make deploy` (and `make quota-check`): it picks the MCP function's reserved
// concurrency from the account's Lambda quota, builds the inbox, runs `sam build` and `sam deploy`
// (merging the parameters it sets into samconfig.toml's, which `--parameter-overrides` would
// otherwise replace), uploads the inbox to the stack's bucket, invalidates CloudFront's copies of
// the files that are never cached, and prints the URLs. See docs/deploy.md.
//
//	go run ./infra/deploy [--stack loopback] [--region R] [--stage prod] [--mcp-reserved N] [--samconfig FILE] [--sam sam]
//	go run ./infra/deploy --quota-only [...]
//
// It drives the AWS CLI (`aws`), the SAM CLI and npm as a person would, so a failing step stops it
// with that tool's own error; every value one step hands to the next is checked on the way (an
// empty bucket name stops it, rather than reaching `aws s3 cp s3:///…`).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "deploy:", err)
		os.Exit(1)
	}
}

// Reservation bounds (template.yaml's McpReservedConcurrency): AWS keeps at least
// unreservedFloor of an account's concurrency unreserved; Loopback reserves defaultReserved for
// the MCP function when the account has room, and nothing when it could reserve fewer than
// minReserved (a handful of waits would then be the most MCP could ever hold).
const (
	unreservedFloor = 100
	defaultReserved = 50
	minReserved     = 10
)

type deployer struct {
	stack, region, stage, reserved, samconfig, sam, web string
	quotaOnly                                           bool
	out, errOut                                         io.Writer
}

func run(args []string, out, errOut io.Writer) error {
	d := &deployer{out: out, errOut: errOut}
	fs := flag.NewFlagSet("deploy", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.StringVar(&d.stack, "stack", "loopback", "the CloudFormation stack")
	fs.StringVar(&d.region, "region", "", "the AWS region (empty: the AWS CLI's configuration)")
	fs.StringVar(&d.stage, "stage", "", "the Stage parameter (empty: samconfig.toml's, else the template's prod)")
	fs.StringVar(&d.reserved, "mcp-reserved", "", "McpReservedConcurrency (empty: samconfig.toml's, else chosen from the account's quota)")
	fs.StringVar(&d.samconfig, "samconfig", "samconfig.toml", "the SAM CLI configuration file")
	fs.StringVar(&d.sam, "sam", "sam", "the SAM CLI")
	fs.StringVar(&d.web, "web", "web", "the inbox's folder (built into <web>/dist)")
	fs.BoolVar(&d.quotaOnly, "quota-only", false, "only check the quota and print the reservation it allows")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return d.deploy()
}

func (d *deployer) deploy() error {
	cfg, err := readSamconfig(d.samconfig)
	if err != nil {
		return err
	}
	params, err := parseOverrides(cfg.ParameterOverrides)
	if err != nil {
		return fmt.Errorf("%s: parameter_overrides: %w", d.samconfig, err)
	}
	// What make was given wins over samconfig.toml; samconfig.toml over the defaults.
	if d.stage != "" {
		params.set("Stage", d.stage)
	}
	if d.reserved != "" {
		params.set("McpReservedConcurrency", d.reserved)
	}
	reserved, err := d.chooseReserved(params.get("McpReservedConcurrency"))
	if err != nil {
		return err
	}
	params.set("McpReservedConcurrency", strconv.Itoa(reserved))
	if d.quotaOnly {
		return nil
	}

	d.step("building the inbox (%s/dist)", d.web)
	if err := d.cmd(d.web, "npm", "ci", "--no-audit", "--no-fund"); err != nil {
		return err
	}
	if err := d.cmd(d.web, "npm", "run", "build"); err != nil {
		return err
	}
	// sam build runs the functions' builds at once (samconfig.toml); on a machine whose Go build
	// cache lacks their packages, each would compile them all (Makefile, lambda-cache).
	d.step("compiling the functions' packages once (make lambda-cache)")
	if err := d.cmd("", "make", "--no-print-directory", "lambda-cache"); err != nil {
		return err
	}
	config := d.configArgs()
	d.step("sam build")
	if err := d.cmd("", d.sam, append([]string{"build"}, config...)...); err != nil {
		return err
	}
	d.step("sam deploy --stack-name %s, parameters %s", d.stack, params)
	deployArgs := append([]string{"deploy"}, config...)
	deployArgs = append(deployArgs, "--stack-name", d.stack)
	deployArgs = append(deployArgs, d.regionArgs()...)
	deployArgs = append(deployArgs, "--parameter-overrides")
	deployArgs = append(deployArgs, params.args()...)
	if err := d.cmd("", d.sam, deployArgs...); err != nil {
		return err
	}

	outputs, err := d.outputs()
	if err != nil {
		return err
	}
	bucket, dist := outputs["InboxBucketName"], outputs["DistributionId"]
	if bucket == "" || dist == "" {
		return fmt.Errorf("stack %s has no InboxBucketName or DistributionId output (%v): is it this template's stack?", d.stack, outputs)
	}
	d.step("uploading the inbox to s3://%s", bucket)
	distDir := filepath.Join(d.web, "dist")
	// Hashed assets are kept a year; the files whose names never change are never cached.
	noCache := []struct{ file, contentType string }{
		{"index.html", "text/html; charset=utf-8"},
		{"sw.js", "text/javascript; charset=utf-8"},
		{"manifest.webmanifest", "application/manifest+json"},
	}
	sync := []string{"s3", "sync", distDir, "s3://" + bucket, "--delete", "--exclude", ".sources-sha256"}
	for _, f := range noCache {
		sync = append(sync, "--exclude", f.file)
	}
	sync = append(sync, "--cache-control", "public, max-age=31536000, immutable")
	if err := d.aws(sync...); err != nil {
		return err
	}
	paths := []string{}
	for _, f := range noCache {
		if err := d.aws("s3", "cp", filepath.Join(distDir, f.file), "s3://"+bucket+"/"+f.file,
			"--cache-control", "no-cache", "--content-type", f.contentType); err != nil {
			return err
		}
		paths = append(paths, "/"+f.file)
	}
	d.step("invalidating %s on CloudFront %s", strings.Join(paths, " "), dist)
	if _, err := d.awsOutput(append([]string{"cloudfront", "create-invalidation", "--distribution-id", dist, "--paths"}, paths...)...); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "\nInbox: %s\nMCP:   %s\n\n", outputs["InboxUrl"], outputs["McpUrl"])
	fmt.Fprintln(d.out, "First deploy? Create your credentials: make bootstrap NAME=you")
	fmt.Fprintf(d.out, "Then check the stack end to end: make smoke URL=%s TOKEN=<your token> AGENT_TOKEN=<the agent token>\n", strings.TrimSuffix(outputs["InboxUrl"], "/"))
	return nil
}

// chooseReserved decides McpReservedConcurrency: the one asked for (make's MCP_RESERVED or
// samconfig.toml's), checked against what the account can spare, or, when none was asked for, 50
// when the account can spare it, less when it can spare between 10 and 50, and 0 (unreserved)
// otherwise, with the reason printed. An account can spare what is unreserved now, plus what the
// MCP function of this stack holds already (a redeploy gives it back first), less the 100
// executions AWS keeps unreserved.
func (d *deployer) chooseReserved(asked string) (int, error) {
	want := -1
	if asked != "" {
		n, err := strconv.Atoi(asked)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("McpReservedConcurrency %q: want a number of executions, 0 for none", asked)
		}
		want = n
	}
	if want == 0 {
		fmt.Fprintln(d.out, "MCP reserved concurrency: 0 as asked (the MCP function shares the account's unreserved executions)")
		return 0, nil
	}
	line, err := d.awsOutput(append([]string{"lambda", "get-account-settings"}, append(d.regionArgs(),
		"--query", "AccountLimit.[ConcurrentExecutions,UnreservedConcurrentExecutions]", "--output", "text")...)...)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(line)
	var quota, unreserved int
	if len(f) != 2 {
		return 0, fmt.Errorf("aws lambda get-account-settings printed %q, want the quota and the unreserved executions", line)
	}
	if quota, err = strconv.Atoi(f[0]); err == nil {
		unreserved, err = strconv.Atoi(f[1])
	}
	if err != nil {
		return 0, fmt.Errorf("aws lambda get-account-settings printed %q, want two numbers", line)
	}
	held := d.heldByMcp()
	room := unreserved + held - unreservedFloor
	have := fmt.Sprintf("This account's Lambda concurrency quota is %d (%d unreserved", quota, unreserved)
	if held > 0 {
		have += fmt.Sprintf(", %d reserved for this stack's MCP function now", held)
	}
	have += ")"
	raise := "Request more in Service Quotas: Lambda, 'Concurrent executions' (L-B99A9384), 1000 is the usual figure;\n" +
		"  aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 1000"
	switch {
	case want > 0 && room >= want:
		fmt.Fprintf(d.out, "%s: room for %d reserved for MCP and %d for the rest.\n", have, want, unreserved+held-want)
		return want, nil
	case want > 0:
		return 0, fmt.Errorf("%s: reserving %d for the MCP function would leave fewer than the %d AWS keeps unreserved.\n%s\n"+
			"or deploy unreserved: make deploy MCP_RESERVED=0 (waiting agents then share the account's executions with the reply that ends their waits)",
			have, want, unreservedFloor, raise)
	case room >= defaultReserved:
		fmt.Fprintf(d.out, "%s: reserving %d for the MCP function (MCP_RESERVED=N to choose).\n", have, defaultReserved)
		return defaultReserved, nil
	case room >= minReserved:
		fmt.Fprintf(d.out, "%s: reserving %d for the MCP function, all it can spare beside the %d AWS keeps unreserved.\n", have, room, unreservedFloor)
		return room, nil
	default:
		fmt.Fprintf(d.out, "%s: too small to reserve executions for the MCP function beside the %d AWS keeps unreserved,\n"+
			"so it is deployed unreserved (McpReservedConcurrency=0). Every function then shares the %d: a few waiting\n"+
			"agents can throttle the reply that would end their waits. New accounts start this small.\n%s\nthen make deploy again: it reserves %d once there is room.\n",
			have, unreservedFloor, quota, raise, defaultReserved)
		return 0, nil
	}
}

// heldByMcp is what this stack's MCP function has reserved now (0 when the stack or the
// reservation does not exist yet).
func (d *deployer) heldByMcp() int {
	name, err := d.awsOutput(append([]string{"cloudformation", "describe-stack-resource", "--stack-name", d.stack,
		"--logical-resource-id", "McpFunction"}, append(d.regionArgs(),
		"--query", "StackResourceDetail.PhysicalResourceId", "--output", "text")...)...)
	if err != nil || name == "" || name == "None" {
		return 0
	}
	n, err := d.awsOutput(append([]string{"lambda", "get-function-concurrency", "--function-name", name}, append(d.regionArgs(),
		"--query", "ReservedConcurrentExecutions", "--output", "text")...)...)
	if err != nil {
		return 0
	}
	held, err := strconv.Atoi(n)
	if err != nil {
		return 0 // "None": nothing reserved
	}
	return held
}

// outputs reads the stack's outputs, key → value.
func (d *deployer) outputs() (map[string]string, error) {
	text, err := d.awsOutput(append([]string{"cloudformation", "describe-stacks", "--stack-name", d.stack},
		append(d.regionArgs(), "--query", "Stacks[0].Outputs", "--output", "json")...)...)
	if err != nil {
		return nil, err
	}
	var list []struct{ OutputKey, OutputValue string }
	if err := json.Unmarshal([]byte(text), &list); err != nil {
		return nil, fmt.Errorf("the stack's outputs: %v: %s", err, text)
	}
	m := map[string]string{}
	for _, o := range list {
		m[o.OutputKey] = o.OutputValue
	}
	return m, nil
}

func (d *deployer) configArgs() []string {
	if d.samconfig == "samconfig.toml" {
		return nil // sam's own default
	}
	abs, err := filepath.Abs(d.samconfig)
	if err != nil {
		abs = d.samconfig
	}
	return []string{"--config-file", abs}
}

func (d *deployer) regionArgs() []string {
	if d.region == "" {
		return nil
	}
	return []string{"--region", d.region}
}

func (d *deployer) step(format string, args ...any) {
	fmt.Fprintf(d.out, "--- "+format+"\n", args...)
}

// cmd runs a tool with its output shown.
func (d *deployer) cmd(dir, name string, args ...string) error {
	c := exec.Command(name, args...)
	c.Dir, c.Stdout, c.Stderr = dir, d.out, d.errOut
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// aws runs the AWS CLI with its output shown.
func (d *deployer) aws(args ...string) error { return d.cmd("", "aws", args...) }

// awsOutput runs the AWS CLI and returns what it printed, trimmed; its errors are shown.
func (d *deployer) awsOutput(args ...string) (string, error) {
	var buf, errBuf bytes.Buffer
	c := exec.Command("aws", args...)
	c.Stdout, c.Stderr = &buf, &errBuf
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("aws %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errBuf.String()))
	}
	return strings.TrimSpace(buf.String()), nil
}

// samconfig is what deploy reads of samconfig.toml: the default environment's
// parameter_overrides (deploy's, else global's).
type samconfig struct{ ParameterOverrides string }

// readSamconfig reads parameter_overrides from [default.deploy.parameters] (or
// [default.global.parameters]): a TOML string, or an array of strings (joined by spaces, as
// SAM joins them). A missing file is an empty configuration.
func readSamconfig(path string) (samconfig, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return samconfig{}, nil
	} else if err != nil {
		return samconfig{}, err
	}
	found := map[string]string{}
	section := ""
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[] ")
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(key) != "parameter_overrides" {
			continue
		}
		value = strings.TrimSpace(stripComment(value))
		if strings.HasPrefix(value, "[") { // an array, perhaps over several lines
			for !strings.Contains(value, "]") && i+1 < len(lines) {
				i++
				value += " " + strings.TrimSpace(stripComment(lines[i]))
			}
			var parts []string
			rest := strings.TrimSpace(strings.TrimPrefix(value, "["))
			for {
				rest = strings.TrimLeft(rest, " ,\t")
				if rest == "" || rest[0] == ']' || rest[0] == '#' {
					break
				}
				s, n, err := tomlString(rest)
				if err != nil {
					return samconfig{}, fmt.Errorf("%s:%d: %w", path, i+1, err)
				}
				parts, rest = append(parts, s), rest[n:]
			}
			found[section] = strings.Join(parts, " ")
			continue
		}
		s, _, err := tomlString(value)
		if err != nil {
			return samconfig{}, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		found[section] = s
	}
	if v, ok := found["default.deploy.parameters"]; ok {
		return samconfig{ParameterOverrides: v}, nil
	}
	return samconfig{ParameterOverrides: found["default.global.parameters"]}, nil
}

// stripComment drops a trailing # comment outside strings, roughly (enough to find an array's end).
func stripComment(s string) string {
	in := byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case in == 0 && (c == '"' || c == '\''):
			in = c
		case in != 0 && c == '\\' && in == '"':
			i++
		case in != 0 && c == in:
			in = 0
		case in == 0 && c == '#':
			return s[:i]
		}
	}
	return s
}

// tomlString reads one TOML basic ("…") or literal ('…') string at the start of s: its value
// and how many bytes it took.
func tomlString(s string) (string, int, error) {
	switch {
	case strings.HasPrefix(s, "'"):
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", 0, errors.New("an unterminated string")
		}
		return s[1 : end+1], end + 2, nil
	case strings.HasPrefix(s, `"`):
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				v, err := strconv.Unquote(s[:i+1])
				return v, i + 1, err
			}
		}
		return "", 0, errors.New("an unterminated string")
	}
	return "", 0, fmt.Errorf("want a string, got %q", s)
}

// overrides are SAM's parameter overrides in order: Key=Value, a value quoted when it has spaces.
type overrides struct {
	keys   []string
	values map[string]string
}

// parseOverrides reads SAM's --parameter-overrides form: space-separated Key=Value, a value in
// double or single quotes when it holds spaces, or ParameterKey=K,ParameterValue=V.
func parseOverrides(s string) (*overrides, error) {
	o := &overrides{values: map[string]string{}}
	for _, word := range splitWords(s) {
		if k, ok := strings.CutPrefix(word, "ParameterKey="); ok {
			key, value, ok := strings.Cut(k, ",ParameterValue=")
			if !ok {
				return nil, fmt.Errorf("%q: want ParameterKey=K,ParameterValue=V", word)
			}
			o.set(key, value)
			continue
		}
		key, value, ok := strings.Cut(word, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("%q: want Key=Value", word)
		}
		o.set(key, value)
	}
	return o, nil
}

// splitWords splits on spaces outside quotes, dropping the quotes.
func splitWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, has := rune(0), false
	for _, c := range s {
		switch {
		case in != 0 && c == in:
			in = 0
		case in == 0 && (c == '"' || c == '\''):
			in, has = c, true
		case in == 0 && (c == ' ' || c == '\t' || c == '\n'):
			if has {
				words, has = append(words, cur.String()), false
				cur.Reset()
			}
		default:
			cur.WriteRune(c)
			has = true
		}
	}
	if has {
		words = append(words, cur.String())
	}
	return words
}

func (o *overrides) set(key, value string) {
	if _, ok := o.values[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.values[key] = value
}

func (o *overrides) get(key string) string { return o.values[key] }

// args is one argument per parameter, as sam deploy --parameter-overrides takes them.
func (o *overrides) args() []string {
	out := make([]string, len(o.keys))
	for i, k := range o.keys {
		v := o.values[k]
		if strings.ContainsAny(v, " \t\"'\\") {
			v = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
		}
		out[i] = k + "=" + v
	}
	return out
}

func (o *overrides) String() string { return strings.Join(o.args(), " ") }
