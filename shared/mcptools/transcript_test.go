package mcptools_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// Transcript tests of the wire, as the official go-sdk keeps its conformance transcripts: each
// file of testdata/transcripts is a txtar archive that holds what a client sends to /mcp (and to
// the inbox's API) and what it gets back, in order, with what differs from run to run replaced by
// placeholders. The test replays the client's requests against a real deployment (app.New on a
// real SQLite file, as the rest of this package's tests) and compares the answers. After a change
// to the wire that is meant, `go test ./shared/mcptools -run TestTranscripts -update` rewrites
// the answers; the diff is the change, to be read before it is committed.
//
// An archive's files, in the order they happen:
//
//	-- N client --   a request: its method and path, its headers, a blank line, its body.
//	-- N server --   what came back: the status, the headers that matter (Content-Type,
//	                 Mcp-Session-Id, Allow), a blank line, the body: JSON indented as sent, or an
//	                 event stream's data events (keepalive comments left out).
//	-- N person --   the person's move in the inbox (POST /api/v1/asks/{id}/reply with a person's
//	                 credential) on the ask an agent waits on: the reply's body.
//
// Requests run concurrently: a request whose answer waits for the person has its server file
// after the person's move. Placeholders: <agent> and <person> are the tokens; <credential> the
// agent credential's id; <session> the Mcp-Session-Id the server gave; <ask1>, <task1>, ... the
// ids in the order they first appear; <time> a timestamp; <version> the server's version.

var update = flag.Bool("update", false, "rewrite the server files of testdata/transcripts from what the server answers")

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runTranscript(t, file)
		})
	}
}

// archive is a txtar archive: a comment, then named files.
type archive struct {
	comment string
	files   []archiveFile
}

type archiveFile struct{ name, data string }

var archiveMarker = regexp.MustCompile(`(?m)^-- (.+) --$`)

func parseArchive(s string) archive {
	locs := archiveMarker.FindAllStringSubmatchIndex(s, -1)
	if len(locs) == 0 {
		return archive{comment: s}
	}
	a := archive{comment: s[:locs[0][0]]}
	for i, l := range locs {
		end := len(s)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		data := s[l[1]:end]
		data = strings.TrimPrefix(data, "\n")
		a.files = append(a.files, archiveFile{name: s[l[2]:l[3]], data: data})
	}
	return a
}

func (a archive) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n%s", f.name, f.data)
		if !strings.HasSuffix(f.data, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// transcript is a replay in progress: the placeholders known so far, and the answers pending.
type transcript struct {
	t      *testing.T
	d      *deployment
	values map[string]string // placeholder -> value
	counts map[string]int    // kind -> how many of it are known
	answer map[string]chan *http.Response
}

func runTranscript(t *testing.T, file string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	a := parseArchive(string(raw))
	d := newTestDeployment(t, deployOpts{})
	agent, credential := d.agent(t, "transcript")
	tr := &transcript{t: t, d: d, counts: map[string]int{}, answer: map[string]chan *http.Response{},
		values: map[string]string{"<agent>": agent, "<person>": d.Token, "<credential>": credential,
			"<version>": "revision " + strconv.Itoa(buildinfo.Revision) + " build " + buildinfo.Build}}
	failed := false
	for i, f := range a.files {
		n, kind, ok := strings.Cut(f.name, " ")
		if !ok {
			t.Fatalf("%s: a file named %q: want \"N client\", \"N server\" or \"N person\"", file, f.name)
		}
		switch kind {
		case "client":
			tr.send(n, f.data)
		case "person":
			tr.personReplies(f.data)
		case "server":
			got := tr.receive(n)
			if got != f.data {
				if *update {
					a.files[i].data = got
					continue
				}
				failed = true
				t.Errorf("%s: answer %s differs (go test -run TestTranscripts -update rewrites it)\n%s", file, n, firstDifference(f.data, got))
			}
		default:
			t.Fatalf("%s: a file named %q: want \"N client\", \"N server\" or \"N person\"", file, f.name)
		}
	}
	if *update && !failed {
		if err := os.WriteFile(file, []byte(a.format()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// firstDifference shows where two answers part: the first line that differs, with a few lines
// of each around it.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	around := func(lines []string) string {
		from, to := max(0, i-3), min(len(lines), i+4)
		return strings.Join(lines[from:to], "\n")
	}
	return fmt.Sprintf("line %d:\n--- want\n%s\n--- got\n%s", i+1, around(w), around(g))
}

// fill puts the placeholders' values into a request: each must be known by then.
func (tr *transcript) fill(s string) string {
	for k, v := range tr.values {
		s = strings.ReplaceAll(s, k, v)
	}
	if p := placeholder.FindString(s); p != "" {
		tr.t.Fatalf("%s is used before any answer gave it", p)
	}
	return s
}

var placeholder = regexp.MustCompile(`<(agent|person|credential|session|version|ask\d+|task\d+)>`)

// send starts request n: "METHOD /path", headers, a blank line, the body.
func (tr *transcript) send(n, text string) {
	t := tr.t
	head, body, _ := strings.Cut(tr.fill(text), "\n\n")
	lines := strings.Split(head, "\n")
	method, path, ok := strings.Cut(lines[0], " ")
	if !ok {
		t.Fatalf("request %s: the first line %q is not \"METHOD /path\"", n, lines[0])
	}
	req, err := http.NewRequest(method, tr.d.URL+path, strings.NewReader(strings.TrimSpace(body)))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			t.Fatalf("request %s: a header line %q", n, l)
		}
		req.Header.Set(k, v)
	}
	ch := make(chan *http.Response, 1)
	tr.answer[n] = ch
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("request %s: %v", n, err)
			ch <- nil
			return
		}
		ch <- res
	}()
}

// shownHeaders are the response headers a transcript records.
var shownHeaders = []string{"Content-Type", "Mcp-Session-Id", "Allow"}

// receive waits for request n's answer and writes it as a transcript shows it.
func (tr *transcript) receive(n string) string {
	t := tr.t
	ch, ok := tr.answer[n]
	if !ok {
		t.Fatalf("answer %s comes before its request", n)
	}
	res := <-ch
	if res == nil {
		t.FailNow()
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("reading answer %s: %v", n, err)
	}
	if id := res.Header.Get("Mcp-Session-Id"); id != "" {
		tr.values["<session>"] = id
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", res.StatusCode)
	for _, h := range shownHeaders {
		if v := res.Header.Get(h); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	b.WriteString("\n")
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		for _, l := range strings.Split(string(raw), "\n") {
			if data, ok := strings.CutPrefix(l, "data: "); ok {
				b.WriteString("data:\n")
				b.WriteString(tr.json(data))
			}
		}
	} else if len(bytes.TrimSpace(raw)) > 0 {
		b.WriteString(tr.json(string(raw)))
	}
	return tr.normalise(b.String())
}

// json indents a JSON body as sent (its keys in the order sent), learning the ids in it.
func (tr *transcript) json(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s + "\n" // not JSON: as sent
	}
	tr.learn(v)
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(strings.TrimSpace(s)), "", "  "); err != nil {
		return s + "\n"
	}
	out.WriteByte('\n')
	return out.String()
}

// learn gives every askId and taskId in v a placeholder, in the order they appear.
func (tr *transcript) learn(v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s, ok := v[k].(string); ok && (k == "askId" || k == "taskId") && s != "" {
				tr.name(strings.TrimSuffix(k, "Id"), s)
			}
			tr.learn(v[k])
		}
	case []any:
		for _, e := range v {
			tr.learn(e)
		}
	}
}

// name gives value a placeholder of its kind (<ask1>, <task1>, ...) unless it has one.
func (tr *transcript) name(kind, value string) string {
	for k, v := range tr.values {
		if v == value {
			return k
		}
	}
	tr.counts[kind]++
	k := fmt.Sprintf("<%s%d>", kind, tr.counts[kind])
	tr.values[k] = value
	return k
}

var timestamp = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)

// normalise puts the placeholders in place of what differs from run to run.
func (tr *transcript) normalise(s string) string {
	keys := make([]string, 0, len(tr.values))
	for k := range tr.values {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(tr.values[keys[i]]) > len(tr.values[keys[j]]) })
	for _, k := range keys {
		if v := tr.values[k]; v != "" {
			s = strings.ReplaceAll(s, v, k)
		}
	}
	return timestamp.ReplaceAllString(s, "<time>")
}

// personReplies waits for an agent to wait on an ask the person has to answer, then replies on it
// as the person, through the inbox's API.
func (tr *transcript) personReplies(body string) {
	t := tr.t
	var reply any
	if err := json.Unmarshal([]byte(tr.fill(body)), &reply); err != nil {
		t.Fatalf("the person's reply %q: %v", body, err)
	}
	var id string
	eventually(t, "an agent waiting on an ask the person has to answer", func() bool {
		open, _ := tr.d.snapshot(t)
		for _, a := range open {
			if a.Waiting && a.Status == "awaiting_human" {
				id = a.ID
				return true
			}
		}
		return false
	})
	tr.name("ask", id)
	tr.d.reply(t, id, reply)
}
