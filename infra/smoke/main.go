// Command smoke checks a deployed Loopback end to end from a laptop, as its users meet it: the
// first thing to run after `make deploy` (docs/deploy.md).
//
//	LOOPBACK_TOKEN=lb_…(a person's) LOOPBACK_AGENT_TOKEN=lb_…(an agent's) go run ./infra/smoke --url https://d….cloudfront.net
//	make smoke URL=https://d….cloudfront.net TOKEN=lb_… AGENT_TOKEN=lb_…
//
// Through the one address (CloudFront on AWS): both credentials open their space (whoami); the
// event socket opens with a ticket and greets with a snapshot; an agent uploads an image by its
// ticket's URL; an agent asks a question over MCP (mark3labs/mcp-go's client) and waits; the socket
// shows the ask; the person answers over the API; the agent's call returns that answer; the
// socket shows the ask closed; the image reads back through the public URL byte for byte. Each
// step prints what it saw and how long it took; the first failure stops it with what went wrong.
// It leaves one closed question in the space's history (project "loopback-smoke") and one image.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := run(ctx, os.Args[1:], os.Getenv("LOOPBACK_TOKEN"), os.Getenv("LOOPBACK_AGENT_TOKEN"), os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "smoke: FAILED:", err)
		os.Exit(1)
	}
}

// Project names the asks smoke leaves in the history.
const Project = "loopback-smoke"

type smoke struct {
	base          *url.URL
	person, agent string
	out           io.Writer
	http          *http.Client
	// fileWait bounds the wait for an upload's check (S3 → EventBridge → the checker: usually
	// seconds, up to minutes on a new deployment).
	fileWait time.Duration
}

func run(ctx context.Context, args []string, person, agent string, out io.Writer) error {
	fs := flag.NewFlagSet("smoke", flag.ContinueOnError)
	fs.SetOutput(out)
	raw := fs.String("url", "", "the deployment's address (the stack's InboxUrl, or a custom domain)")
	fileWait := fs.Duration("file-wait", 5*time.Minute, "how long an uploaded image may take to be checked")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base, err := url.Parse(strings.TrimSuffix(*raw, "/"))
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return fmt.Errorf("--url %q: want the deployment's address, such as https://d1234abcd.cloudfront.net", *raw)
	}
	if person == "" || agent == "" {
		return errors.New("LOOPBACK_TOKEN (a person's token) and LOOPBACK_AGENT_TOKEN (an agent's) must both be set: make bootstrap printed them")
	}
	s := &smoke{base: base, person: person, agent: agent, out: out, fileWait: *fileWait,
		http: &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	return s.check(ctx)
}

func (s *smoke) ok(start time.Time, format string, a ...any) {
	fmt.Fprintf(s.out, "ok   %-58s %6d ms\n", fmt.Sprintf(format, a...), time.Since(start).Milliseconds())
}

func (s *smoke) check(ctx context.Context) error {
	fmt.Fprintf(s.out, "Checking %s end to end\n", s.base)
	// 1. Both credentials open the same space, each in its role.
	start := time.Now()
	var me, them struct {
		Space string `json:"space"`
	}
	if err := s.api(ctx, s.person, "GET", "/api/v1/whoami", nil, http.StatusOK, &me); err != nil {
		return fmt.Errorf("the person's token: %w", err)
	}
	if err := s.api(ctx, s.agent, "GET", "/api/v1/whoami", nil, http.StatusOK, &them); err != nil {
		return fmt.Errorf("the agent's token: %w", err)
	}
	if me.Space == "" || me.Space != them.Space {
		return fmt.Errorf("the person's token opens space %q, the agent's %q: want both tokens of one space", me.Space, them.Space)
	}
	if err := s.api(ctx, s.person, "GET", "/api/v1/snapshot", nil, http.StatusOK, nil); err != nil {
		return fmt.Errorf("LOOPBACK_TOKEN must be a person's token (it must open the inbox): %w", err)
	}
	if err := s.api(ctx, s.agent, "GET", "/api/v1/snapshot", nil, http.StatusForbidden, nil); err != nil {
		return fmt.Errorf("LOOPBACK_AGENT_TOKEN must be an agent's token (the inbox refuses it): %w", err)
	}
	s.ok(start, "API: both tokens open space %s", me.Space)

	// 2. The event socket, as the inbox opens it: a ticket, then the socket, greeted by a snapshot.
	start = time.Now()
	events, err := s.socket(ctx)
	if err != nil {
		return err
	}
	defer events.close()
	s.ok(start, "event socket: open, snapshot received")

	// 3. MCP, as an agent.
	start = time.Now()
	agent, err := s.mcp(ctx)
	if err != nil {
		return err
	}
	defer agent.Close()
	s.ok(start, "MCP: initialized")

	// 4. An image, by its upload ticket's URL.
	start = time.Now()
	img := pngBytes()
	uploadID, err := s.upload(ctx, agent, img)
	if err != nil {
		return err
	}
	s.ok(start, "upload: %d bytes sent as %s", len(img), uploadID)

	// 5. An ask over MCP, seen on the socket, answered over the API, returned to the agent.
	start = time.Now()
	question := fmt.Sprintf("Loopback smoke check %s: does this deployment work?", time.Now().UTC().Format(time.RFC3339Nano))
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	callCtx, cancelCall := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelCall()
	done := make(chan result, 1)
	go func() {
		var req mcp.CallToolRequest
		req.Params.Name = "ask_question"
		req.Params.Arguments = map[string]any{"question": question, "project": Project,
			"options": []map[string]any{{"label": "Yes"}, {"label": "No"}}}
		res, err := agent.CallTool(callCtx, req)
		done <- result{res, err}
	}()
	askID, err := events.waitFor(ctx, 60*time.Second, func(e event) bool {
		return e.Type == "ask.opened" && e.Ask.Prompt.Question == question
	}, func() string {
		select {
		case r := <-done:
			done <- r
			return fmt.Sprintf("; the ask_question call ended: %v %s", r.err, resultText(r.res))
		default:
			return ""
		}
	})
	if err != nil {
		return fmt.Errorf("the question asked over MCP never reached the event socket: %w", err)
	}
	s.ok(start, "ask: opened over MCP, on the socket as %s", askID)
	start = time.Now()
	answer := map[string]any{"outcome": "answered", "selected": []string{"Yes"}, "text": "smoke check"}
	if err := s.api(ctx, s.person, "POST", "/api/v1/asks/"+url.PathEscape(askID)+"/reply", answer, http.StatusOK, nil); err != nil {
		return fmt.Errorf("replying: %w", err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		return errors.New("the agent's ask_question call did not return within 60 s of the reply")
	}
	if r.err != nil {
		return fmt.Errorf("the agent's ask_question call: %w", r.err)
	}
	if r.res.IsError {
		return fmt.Errorf("the agent's ask_question call failed: %s", resultText(r.res))
	}
	var reply struct {
		AskID string `json:"askId"`
		Reply struct {
			Outcome  string   `json:"outcome"`
			Selected []string `json:"selected"`
		} `json:"reply"`
	}
	b, _ := json.Marshal(r.res.StructuredContent)
	if err := json.Unmarshal(b, &reply); err != nil || reply.AskID != askID || reply.Reply.Outcome != "answered" ||
		len(reply.Reply.Selected) != 1 || reply.Reply.Selected[0] != "Yes" {
		return fmt.Errorf("the agent got %s, want the reply to %s: answered, Yes", b, askID)
	}
	s.ok(start, "reply: answered over the API, returned to the agent")
	start = time.Now()
	if _, err := events.waitFor(ctx, 30*time.Second, func(e event) bool {
		return e.Type == "ask.updated" && e.Ask.ID == askID && e.Ask.Status == "closed"
	}, nil); err != nil {
		return fmt.Errorf("the socket never showed %s closed: %w", askID, err)
	}
	s.ok(start, "event socket: %s closed", askID)

	// 6. The image reads back through the public address, once it is checked.
	start = time.Now()
	if err := s.readBack(ctx, uploadID, img); err != nil {
		return err
	}
	s.ok(start, "file: %s read back through %s", uploadID, s.base.Host)
	fmt.Fprintln(s.out, "All checks passed.")
	return nil
}

// api calls the HTTP API with a bearer token and wants status; the body, if any, decodes into out.
func (s *smoke) api(ctx context.Context, token, method, path string, body any, status int, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base.String()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := s.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != status {
		return fmt.Errorf("%s %s: %d %s, want %d", method, path, res.StatusCode, strings.TrimSpace(string(b)), status)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return nil
}

// event is the part of a socket frame smoke reads.
type event struct {
	Type string `json:"type"`
	Ask  struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Prompt struct {
			Question string `json:"question"`
		} `json:"prompt"`
	} `json:"ask"`
}

type socket struct {
	conn   *websocket.Conn
	frames chan event
	err    error // set before frames closes
}

// socket opens the event socket with a ticket, as the inbox does, and waits for its snapshot.
func (s *smoke) socket(ctx context.Context) (*socket, error) {
	var tk struct {
		Ticket string `json:"ticket"`
	}
	if err := s.api(ctx, s.person, "POST", "/api/v1/events/tickets", nil, http.StatusCreated, &tk); err != nil {
		return nil, fmt.Errorf("a ticket for the event socket: %w", err)
	}
	u := *s.base
	u.Scheme = map[string]string{"https": "wss", "http": "ws"}[s.base.Scheme]
	u.Path += "/api/v1/events"
	dialCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	conn, res, err := websocket.Dial(dialCtx, u.String(), &websocket.DialOptions{Subprotocols: []string{"loopback.v1", "loopback.ticket." + tk.Ticket}})
	if err != nil {
		status := ""
		if res != nil {
			status = fmt.Sprintf(" (%d)", res.StatusCode)
		}
		return nil, fmt.Errorf("opening the event socket %s%s: %w", u.String(), status, err)
	}
	conn.SetReadLimit(1 << 20)
	sk := &socket{conn: conn, frames: make(chan event, 64)}
	go func() {
		defer close(sk.frames)
		for {
			_, b, err := conn.Read(context.Background())
			if err != nil {
				sk.err = err
				return
			}
			var e event
			if err := json.Unmarshal(b, &e); err != nil {
				sk.err = fmt.Errorf("a frame that is no JSON: %v: %.200s", err, b)
				return
			}
			sk.frames <- e
		}
	}()
	if _, err := sk.waitFor(ctx, 20*time.Second, func(e event) bool { return e.Type == "snapshot" }, nil); err != nil {
		conn.CloseNow()
		return nil, fmt.Errorf("the event socket opened, but sent no snapshot: %w", err)
	}
	return sk, nil
}

// waitFor reads frames until one matches, and returns its ask's id. more adds to a timeout's error.
func (sk *socket) waitFor(ctx context.Context, d time.Duration, match func(event) bool, more func() string) (string, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	var seen []string
	for {
		select {
		case e, ok := <-sk.frames:
			if !ok {
				return "", fmt.Errorf("the socket closed: %v (frames seen: %s)", sk.err, strings.Join(seen, ", "))
			}
			if match(e) {
				return e.Ask.ID, nil
			}
			seen = append(seen, strings.TrimSpace(e.Type+" "+e.Ask.ID))
		case <-timer.C:
			extra := ""
			if more != nil {
				extra = more()
			}
			return "", fmt.Errorf("nothing within %s (frames seen: %s)%s", d, strings.Join(seen, ", "), extra)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

func (sk *socket) close() { sk.conn.Close(websocket.StatusNormalClosure, "") }

// mcp connects an MCP client with the agent's token.
func (s *smoke) mcp(ctx context.Context) (*client.Client, error) {
	tr, err := transport.NewStreamableHTTP(s.base.String()+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + s.agent}))
	if err != nil {
		return nil, err
	}
	c := client.NewClient(tr)
	initCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Start(initCtx); err != nil {
		return nil, fmt.Errorf("MCP at %s/mcp: %w", s.base, err)
	}
	var init mcp.InitializeRequest
	init.Params.ClientInfo = mcp.Implementation{Name: "loopback-smoke", Version: "1"}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(initCtx, init); err != nil {
		c.Close()
		return nil, fmt.Errorf("MCP initialize at %s/mcp: %w", s.base, err)
	}
	return c, nil
}

// upload asks for an upload ticket over MCP and sends the image to its URL as its command does.
func (s *smoke) upload(ctx context.Context, agent *client.Client, img []byte) (string, error) {
	var req mcp.CallToolRequest
	req.Params.Name = "request_upload"
	req.Params.Arguments = map[string]any{"contentType": "image/png"}
	res, err := agent.CallTool(ctx, req)
	if err != nil {
		return "", fmt.Errorf("request_upload: %w", err)
	}
	if res.IsError {
		return "", fmt.Errorf("request_upload failed: %s", resultText(res))
	}
	var tk struct{ UploadID, UploadURL, Command string }
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &tk); err != nil || tk.UploadID == "" || tk.UploadURL == "" {
		return "", fmt.Errorf("request_upload gave %s, want an upload ticket", b)
	}
	put, err := http.NewRequestWithContext(ctx, "PUT", tk.UploadURL, bytes.NewReader(img))
	if err != nil {
		return "", err
	}
	put.Header.Set("Content-Type", "image/png")
	if strings.Contains(tk.Command, "If-None-Match: *") {
		put.Header.Set("If-None-Match", "*")
	}
	r, err := s.http.Do(put)
	if err != nil {
		return "", fmt.Errorf("sending the image to its upload URL: %w", err)
	}
	defer r.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	if r.StatusCode != http.StatusOK && r.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("sending the image to its upload URL: %d %s", r.StatusCode, body)
	}
	return tk.UploadID, nil
}

// readBack reads the image as the inbox does: GET /api/v1/files/{id} with the person's token,
// then (on AWS) its redirect to a presigned /uploads/… on the same address, without credentials.
// Until the upload is checked the file is not there yet (404): it asks again every 2 s.
func (s *smoke) readBack(ctx context.Context, id string, want []byte) error {
	deadline := time.Now().Add(s.fileWait)
	for {
		req, err := http.NewRequestWithContext(ctx, "GET", s.base.String()+"/api/v1/files/"+url.PathEscape(id), nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+s.person)
		res, err := s.http.Do(req)
		if err != nil {
			return fmt.Errorf("reading the image: %w", err)
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 32<<20))
		res.Body.Close()
		switch {
		case res.StatusCode == http.StatusFound || res.StatusCode == http.StatusSeeOther || res.StatusCode == http.StatusTemporaryRedirect:
			loc, err := s.base.Parse(res.Header.Get("Location"))
			if err != nil {
				return fmt.Errorf("GET /api/v1/files/%s: a redirect to %q: %w", id, res.Header.Get("Location"), err)
			}
			if loc.Host != s.base.Host {
				return fmt.Errorf("GET /api/v1/files/%s redirects to %s, want the deployment's own address %s (CloudFront's /uploads/*)", id, loc.Host, s.base.Host)
			}
			r2, err := s.http.Get(loc.String())
			if err != nil {
				return fmt.Errorf("reading the image at %s: %w", loc.Path, err)
			}
			body, _ = io.ReadAll(io.LimitReader(r2.Body, 32<<20))
			r2.Body.Close()
			if r2.StatusCode != http.StatusOK {
				return fmt.Errorf("reading the image at %s: %d %.300s", loc.Path, r2.StatusCode, body)
			}
			return sameImage(r2.Header, body, want)
		case res.StatusCode == http.StatusOK:
			return sameImage(res.Header, body, want)
		case res.StatusCode == http.StatusNotFound && time.Now().Before(deadline):
			select {
			case <-time.After(2 * time.Second):
			case <-ctx.Done():
				return ctx.Err()
			}
		default:
			return fmt.Errorf("reading the image: GET /api/v1/files/%s: %d %.300s (an upload is checked by UploadCheckFunction after S3 and EventBridge deliver it: see its logs and UploadCheckFailureQueue)", id, res.StatusCode, body)
		}
	}
}

func sameImage(h http.Header, got, want []byte) error {
	if ct := h.Get("Content-Type"); ct != "image/png" {
		return fmt.Errorf("the image came back as %q, want image/png", ct)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("the image came back as %d other bytes, want the %d sent", len(got), len(want))
	}
	return nil
}

// pngBytes is a small PNG, different each run.
func pngBytes() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
	seed := time.Now().UnixNano()
	for i := range img.Pix {
		img.Pix[i] = byte(seed >> (i % 8 * 8))
	}
	img.Set(0, 0, color.NRGBA{R: 255, A: 255})
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}
