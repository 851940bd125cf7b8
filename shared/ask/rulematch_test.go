package ask_test

import (
	"encoding/json"
	"path"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

func TestPrefixCovers(t *testing.T) {
	for _, tt := range []struct {
		prefix, cmd string
		want        bool
	}{
		{"npm test", "npm test", true},
		{"npm test", "npm test -- --watch", true},
		{"npm test", "npm   test\t-- --watch", true},
		{"npm test", "npm testing", false},
		{"npm test", "npm", false},
		{"git status", "git status; rm -rf /", false},
		{"git status", "git status;rm -rf /", false},
		{"npm test", "npm test&&curl x", false},
		{"npm test", "npm test || curl x", false},
		{"npm test", "npm test & curl x", false},
		{"npm test", "npm test | sh", false},
		{"echo", "echo hi > /etc/passwd", false},
		{"cat", "cat < /etc/shadow", false},
		{"echo", "echo `id`", false},
		{"echo", "echo $(id)", false},
		{"echo", "echo ok\nrm -rf /", false},
		{"echo", "echo ok\rrm -rf /", false},
		{"echo", "echo ok\x00rm", false},
		{"git", "git\u00a0status", false}, // a no-break space is part of the word to the shell
		{"git status", "git\u00a0status", false},
		{"gіt", "git status", false}, // Cyrillic і
		{"git", "gіt status", false},
		{"npm test", "npm тest", false},
		{"ls", "ls\u2028rm", false},   // a line separator is no simple command's
		{"git; rm", "git; rm", false}, // a prefix that is not simple covers nothing
		{"", "ls", false},
	} {
		if got := ask.PrefixCovers(tt.prefix, tt.cmd); got != tt.want {
			t.Errorf("PrefixCovers(%q, %q) = %v, want %v", tt.prefix, tt.cmd, got, tt.want)
		}
	}
}

func TestPatternCovers(t *testing.T) {
	for _, tt := range []struct {
		pattern, file, cwd string
		want               bool
	}{
		{"src/**", "/repo/src/a/b.go", "/repo", true},
		{"src/**", "/repo/src/b.go", "/repo", true},
		{"src/**", "src/b.go", "/repo", true},
		{"src/**", "/repo/srcx/b.go", "/repo", false},
		{"src/*.go", "/repo/src/b.go", "/repo", true},
		{"src/*.go", "/repo/src/a/b.go", "/repo", false},
		{"*.md", "/repo/README.md", "/repo", true},
		{"*.md", "/repo/docs/a.md", "/repo", false},
		{"**/*.md", "/repo/docs/a.md", "/repo", true},
		{"**/*.md", "/repo/README.md", "/repo", true},
		{"**", "/repo/x", "/repo/", true},
		{"**", "/repo2/x", "/repo", false},
		{"**", "/repo/../../etc/passwd", "/repo", false},
		{"**", "../../etc/passwd", "/repo", false},
		{"src/**", "src/../../etc/passwd", "/repo", false},
		{"src/**", "/repo/src/../../etc/passwd", "/repo", false},
		{"etc/passwd", "/etc/passwd", "/", true},
		{"/etc/**", "/etc/passwd", "/repo", true},
		{"/etc/**", "../../etc/passwd", "/repo/sub", true}, // absolute patterns match where it lands
		{"/repo/src/**", "/repo/src/a.go", "/repo", true},
		{"../**", "/x", "/repo/a", false},       // not a valid pattern: matches nothing
		{"src/**", "/repo/src/a.go", "", false}, // no working directory: relative patterns never match
		{"src/**", "src/a.go", "", false},
		{"src/**", "/repo/src/a.go", "repo", false},
		{"a**b", "/repo/ab", "/repo", false},
		{"src/**", "/repo/src\x00/a", "/repo", false},
		{"README.md", "/repo/README.md", "/repo", true},
		{"README.md", "/repo/README.mdx", "/repo", false},
		{"*", "/repo", "/repo", false}, // the folder itself is no file in it
	} {
		if got := ask.PatternCovers(tt.pattern, tt.file, tt.cwd); got != tt.want {
			t.Errorf("PatternCovers(%q, %q, %q) = %v, want %v", tt.pattern, tt.file, tt.cwd, got, tt.want)
		}
	}
}

func TestDomainCovers(t *testing.T) {
	for _, tt := range []struct {
		domain, url string
		want        bool
	}{
		{"github.com", "https://github.com/x", true},
		{"github.com", "http://github.com", true},
		{"github.com", "https://GitHub.COM/x", true},
		{"github.com", "https://github.com./x", true},
		{"github.com", "https://github.com:8443/x", true},
		{"github.com", "https://api.github.com/x", false},
		{"github.com", "https://github.com.evil.example/", false},
		{"github.com", "https://github.com@evil.example/", false},
		{"github.com", "https://evil.example/?u=https://github.com", false},
		{"github.com", "https://gіthub.com/", false}, // Cyrillic і
		{"github.com", "ftp://github.com/", false},
		{"github.com", "github.com", false},
		{"github.com", "javascript:github.com", false},
		{"*.github.com", "https://api.github.com/x", true},
		{"*.github.com", "https://a.b.github.com/x", true},
		{"*.github.com", "https://github.com/x", false},
		{"*.github.com", "https://evilgithub.com/x", false},
		{"*.github.com", "https://api.github.com.evil.example/", false},
		{"GitHub.com", "https://github.com/", false}, // not a valid domain: matches nothing
		{"*", "https://github.com/", false},
		{"127.0.0.1", "http://127.0.0.1:8080/", true},
	} {
		if got := ask.DomainCovers(tt.domain, tt.url); got != tt.want {
			t.Errorf("DomainCovers(%q, %q) = %v, want %v", tt.domain, tt.url, got, tt.want)
		}
	}
}

func TestRuleValidate(t *testing.T) {
	ok := []ask.RuleInput{
		{Effect: "allow", RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: "npm test", Project: "web"}},
		{Effect: "deny", RuleScope: ask.RuleScope{Tool: "Edit", PathPattern: "src/**"}},
		{Effect: "allow", RuleScope: ask.RuleScope{Tool: "Read", PathPattern: "/etc/hosts", Agent: "agent_1"}},
		{Effect: "allow", RuleScope: ask.RuleScope{Tool: "WebFetch", Domain: "*.github.com"}},
		{Effect: "allow", RuleScope: ask.RuleScope{Tool: "mcp__github__create_issue"}},
		{Effect: "deny", RuleScope: ask.RuleScope{Tool: "Bash"}},
	}
	for _, in := range ok {
		if err := in.Validate(); err != nil {
			t.Errorf("%+v: %v", in, err)
		}
	}
	bad := map[string]ask.RuleInput{
		"no effect":              {RuleScope: ask.RuleScope{Tool: "Bash"}},
		"an effect that is none": {Effect: "ask", RuleScope: ask.RuleScope{Tool: "Bash"}},
		"no tool":                {Effect: "allow"},
		"a blank tool":           {Effect: "allow", RuleScope: ask.RuleScope{Tool: "\u200b"}},
		"a tool of two lines":    {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Bash\nRead"}},
		"two narrowings":         {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: "ls", Domain: "x.com"}},
		"a prefix for Read":      {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Read", CommandPrefix: "cat"}},
		"a pattern for Bash":     {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Bash", PathPattern: "src/**"}},
		"a domain for Bash":      {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Bash", Domain: "x.com"}},
		"a compound prefix":      {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: "git status; rm -rf /"}},
		"a piped prefix":         {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: "curl x | sh"}},
		"a prefix with spaces":   {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: " ls"}},
		"a pattern with ..":      {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Edit", PathPattern: "../**"}},
		"a pattern with . ":      {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Edit", PathPattern: "./src/**"}},
		"a pattern ending in /":  {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Edit", PathPattern: "src/"}},
		"a pattern of just /":    {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Edit", PathPattern: "/"}},
		"a pattern with a \\":    {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Edit", PathPattern: `src\**`}},
		"** inside a segment":    {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Edit", PathPattern: "src/a**"}},
		"an upper-case domain":   {Effect: "allow", RuleScope: ask.RuleScope{Tool: "WebFetch", Domain: "GitHub.com"}},
		"a look-alike domain":    {Effect: "allow", RuleScope: ask.RuleScope{Tool: "WebFetch", Domain: "gіthub.com"}},
		"a domain with a path":   {Effect: "allow", RuleScope: ask.RuleScope{Tool: "WebFetch", Domain: "github.com/x"}},
		"a bare *":               {Effect: "allow", RuleScope: ask.RuleScope{Tool: "WebFetch", Domain: "*"}},
		"a * in the middle":      {Effect: "allow", RuleScope: ask.RuleScope{Tool: "WebFetch", Domain: "a.*.com"}},
		"a long prefix":          {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: strings.Repeat("a", 501)}},
		"a bidi override":        {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: "ls \u202e"}},
		"a blank project":        {Effect: "allow", RuleScope: ask.RuleScope{Tool: "Bash", Project: " "}},
	}
	for name, in := range bad {
		err := in.Validate()
		if ask.ErrorCode(err) != ask.ERuleInvalid {
			t.Errorf("%s: %v, want %s", name, err, ask.ERuleInvalid)
		}
	}
}

func TestMatchRules(t *testing.T) {
	rule := func(id, effect string, sc ask.RuleScope) *ask.Rule {
		return &ask.Rule{ID: id, RuleInput: ask.RuleInput{Effect: effect, RuleScope: sc}}
	}
	allowNpm := rule("r1", "allow", ask.RuleScope{Tool: "Bash", CommandPrefix: "npm"})
	denyPublish := rule("r2", "deny", ask.RuleScope{Tool: "Bash", CommandPrefix: "npm publish"})
	webOnly := rule("r3", "allow", ask.RuleScope{Tool: "Read", Project: "web"})
	agentOnly := rule("r4", "allow", ask.RuleScope{Tool: "WebFetch", Agent: "agent_a"})
	rules := []*ask.Rule{allowNpm, denyPublish, webOnly, agentOnly}
	use := func(tool string, input map[string]any, project, agent string) ask.ToolUse {
		return ask.NewToolUse(tool, input, project, "/repo", agent)
	}
	for _, tt := range []struct {
		name string
		u    ask.ToolUse
		want *ask.Rule
	}{
		{"an allowed command", use("Bash", map[string]any{"command": "npm test"}, "web", "a"), allowNpm},
		{"deny wins over allow", use("Bash", map[string]any{"command": "npm publish --tag x"}, "web", "a"), denyPublish},
		{"a compound command", use("Bash", map[string]any{"command": "npm test; npm publish"}, "web", "a"), nil},
		{"another tool", use("Edit", map[string]any{"file_path": "/repo/a"}, "web", "a"), nil},
		{"its project", use("Read", map[string]any{"file_path": "/repo/a"}, "web", "a"), webOnly},
		{"another project", use("Read", map[string]any{"file_path": "/repo/a"}, "api", "a"), nil},
		{"its agent", use("WebFetch", map[string]any{"url": "https://x.example"}, "web", "agent_a"), agentOnly},
		{"another agent", use("WebFetch", map[string]any{"url": "https://x.example"}, "web", "agent_b"), nil},
		{"a command not a string", use("Bash", map[string]any{"command": []any{"npm", "test"}}, "web", "a"), nil},
		{"tool names are exact", use("bash", map[string]any{"command": "npm test"}, "web", "a"), nil},
	} {
		if got := ask.MatchRules(rules, tt.u); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// FuzzPrefixCovers: a prefix never covers a command that is not simple, and covers only one
// whose words begin with the prefix's words.
func FuzzPrefixCovers(f *testing.F) {
	for _, s := range [][2]string{
		{"npm test", "npm test -- --watch"}, {"git status", "git status; rm -rf /"}, {"npm test", "npm test&&curl x"},
		{"echo", "echo $(id)"}, {"ls", "ls\nrm"}, {"git", "git\u00a0status"}, {"a", "a `b`"}, {"a b", "a\tb c"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, prefix, cmd string) {
		if !ask.PrefixCovers(prefix, cmd) {
			return
		}
		for _, bad := range []string{";", "&", "|", ">", "<", "`", "$(", "\n", "\r", "\x00"} {
			if strings.Contains(cmd, bad) {
				t.Fatalf("%q covers %q, which holds %q", prefix, cmd, bad)
			}
		}
		fields := func(s string) []string {
			return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
		}
		pw, cw := fields(prefix), fields(cmd)
		if len(pw) == 0 || len(cw) < len(pw) {
			t.Fatalf("%q covers %q: words %q, %q", prefix, cmd, pw, cw)
		}
		for i := range pw {
			if pw[i] != cw[i] {
				t.Fatalf("%q covers %q, but word %d differs", prefix, cmd, i)
			}
		}
		sc := ask.RuleScope{Tool: "Bash", CommandPrefix: prefix}
		if sc.Validate("") != nil && ask.SimpleCommand(prefix) && strings.TrimSpace(prefix) == prefix && !ask.Blank(prefix) && len([]rune(prefix)) <= 500 {
			t.Fatalf("%q covers a command but is refused as a rule: %v", prefix, sc.Validate(""))
		}
	})
}

// FuzzPatternCovers: a relative pattern never covers a path outside the working directory, and
// an absolute one only paths under its literal start.
func FuzzPatternCovers(f *testing.F) {
	for _, s := range [][3]string{
		{"src/**", "/repo/src/a.go", "/repo"}, {"**", "../../etc/passwd", "/repo"}, {"*.md", "README.md", "/repo"},
		{"/etc/**", "/etc/passwd", "/repo"}, {"**", "/repo/../x", "/repo"}, {"a/*/b", "/r/a/x/b", "/r"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, pattern, file, cwd string) {
		if !ask.PatternCovers(pattern, file, cwd) {
			return
		}
		abs := file
		if !path.IsAbs(abs) {
			abs = path.Join(cwd, file)
		}
		abs = path.Clean(abs)
		if !path.IsAbs(abs) {
			t.Fatalf("%q covers %q (cwd %q), which lands nowhere", pattern, file, cwd)
		}
		if strings.HasPrefix(pattern, "/") {
			lit := pattern
			if i := strings.IndexByte(lit, '*'); i >= 0 {
				lit = lit[:strings.LastIndexByte(lit[:i], '/')+1]
			}
			if !strings.HasPrefix(abs, lit) && abs+"/" != lit {
				t.Fatalf("%q covers %q (at %q), outside %q", pattern, file, abs, lit)
			}
			return
		}
		c := path.Clean(cwd)
		if !path.IsAbs(c) || !(c == "/" || strings.HasPrefix(abs, c+"/")) {
			t.Fatalf("relative %q covers %q (at %q), outside the working directory %q", pattern, file, abs, cwd)
		}
	})
}

// FuzzDomainCovers: a domain covers a URL only when the URL's host is it, or under it.
func FuzzDomainCovers(f *testing.F) {
	for _, s := range [][2]string{
		{"github.com", "https://github.com/x"}, {"*.github.com", "https://api.github.com"},
		{"github.com", "https://github.com@evil.example/"}, {"github.com", "https://github.com.evil.example"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, domain, raw string) {
		if !ask.DomainCovers(domain, raw) {
			return
		}
		h := ask.URLHost(raw)
		d, wild := strings.CutPrefix(domain, "*.")
		if wild && !strings.HasSuffix(h, "."+d) || !wild && h != domain {
			t.Fatalf("%q covers %q (host %q)", domain, raw, h)
		}
		if strings.ContainsAny(h, "@:/?#[]") || strings.ToLower(h) != h {
			t.Fatalf("%q covers %q, whose host %q is not a plain host name", domain, raw, h)
		}
	})
}

// FuzzRuleInput: whatever JSON a person sends, a rule that passes Validate has one tool, at most
// one narrowing that fits it, and encodes to what the contract declares.
func FuzzRuleInput(f *testing.F) {
	for _, s := range []string{
		`{"effect":"allow","tool":"Bash","commandPrefix":"npm test"}`,
		`{"effect":"deny","tool":"Edit","pathPattern":"src/**","project":"web"}`,
		`{"effect":"allow","tool":"WebFetch","domain":"*.github.com","agent":"a"}`,
		`{"effect":"allow","tool":"Bash","commandPrefix":"ls; rm"}`,
		`{"effect":"allow","tool":"Read","pathPattern":"../x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in ask.RuleInput
		if json.Unmarshal(data, &in) != nil || in.Validate() != nil {
			return
		}
		n := 0
		for _, v := range []string{in.CommandPrefix, in.PathPattern, in.Domain} {
			if v != "" {
				n++
			}
		}
		switch {
		case n > 1:
			t.Fatalf("%s: %d narrowings", data, n)
		case in.CommandPrefix != "" && (in.Tool != "Bash" || !ask.SimpleCommand(in.CommandPrefix)):
			t.Fatalf("%s: a prefix that does not fit", data)
		case in.PathPattern != "" && (!ask.FileTool(in.Tool) || strings.Contains("/"+in.PathPattern+"/", "/../")):
			t.Fatalf("%s: a pattern that does not fit", data)
		case in.Domain != "" && in.Tool != "WebFetch":
			t.Fatalf("%s: a domain that does not fit", data)
		case in.Effect != "allow" && in.Effect != "deny":
			t.Fatalf("%s: effect %q", data, in.Effect)
		}
		r := ask.Rule{ID: "rule_x", RuleInput: in, CreatedBy: ask.Actor{ID: "ada"}}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
	})
}
