package main

// Uploads against the real binary: a ticket from request_upload over MCP, then every answer of
// PUT /api/v1/uploads/{spaceId}/{token} and GET /api/v1/files/{uploadId}, racing PUTs, path
// traversal, spaces, image blocks, and the printed curl command run as it is.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/upload"
)

// uploadTicketView is the contract's UploadTicket as the test reads it.
type uploadTicketView struct {
	UploadID  string `json:"uploadId"`
	UploadURL string `json:"uploadUrl"`
	ExpiresAt string `json:"expiresAt"`
	MaxBytes  int64  `json:"maxBytes"`
	Command   string `json:"command"`
}

// path is the ticket URL's path, for requests the test builds by hand.
func (tk uploadTicketView) path(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(tk.UploadURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.EscapedPath()
}

// requestUploadVia calls request_upload over MCP and checks the result against the contract.
func requestUploadVia(t *testing.T, c *client.Client, contentType string) uploadTicketView {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = "request_upload"
	req.Params.Arguments = map[string]any{"contentType": contentType}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("request_upload: %v", err)
	}
	if res.IsError {
		t.Fatalf("request_upload: %s", textOf(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.ValidateModel("UploadTicket", b); err != nil {
		t.Fatalf("request_upload's result is not an UploadTicket: %v\n%s", err, b)
	}
	var tk uploadTicketView
	if err := json.Unmarshal(b, &tk); err != nil {
		t.Fatal(err)
	}
	return tk
}

// putUpload sends a PUT with no credentials (but any headers given, name then value).
// contentLength -1 sends the body chunked. The response is checked against the contract like
// every other.
func (s *server) putUpload(t *testing.T, path, contentType string, body []byte, contentLength int64, headers ...string) response {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	if contentLength < 0 {
		r = io.MultiReader(r) // hides the length: net/http sends it chunked
	}
	req, err := http.NewRequest("PUT", s.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = contentLength
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("PUT %s: %v", path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	s.checkUploadResponse(t, "PUT", path, res, b)
	return response{res.StatusCode, res.Header, b}
}

func (s *server) checkUploadResponse(t *testing.T, method, path string, res *http.Response, b []byte) {
	t.Helper()
	if res.Header.Get("Loopback-Revision") != strconv.Itoa(buildinfo.Revision) {
		t.Errorf("%s %s: no Loopback-Revision", method, path)
	}
	if res.StatusCode >= 500 {
		t.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if err := validateResponse(method, path, res.StatusCode, res.Header.Get("Content-Type"), b); err != nil {
		t.Errorf("%s %s → %d breaks the contract: %v\n%s", method, path, res.StatusCode, err, b)
	}
}

// rawPut writes a PUT by hand on its own connection, with exactly the headers given (so they may
// lie), sends body as it is while reading the response, and returns the response.
func (s *server) rawPut(t *testing.T, path string, headers []string, body []byte) (int, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	head := "PUT " + path + " HTTP/1.1\r\nHost: " + strings.TrimPrefix(s.base, "http://") + "\r\n" + strings.Join(headers, "\r\n") + "\r\n\r\n"
	go func() {
		// The server may answer and close before all of it is sent: write errors are expected.
		conn.Write([]byte(head))
		conn.Write(body)
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: "PUT"})
	if err != nil {
		t.Fatalf("reading the response to a hand-written PUT: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	s.checkUploadResponse(t, "PUT", path, res, b)
	return res.StatusCode, b
}

// chunked encodes body in HTTP/1.1 chunks of 64 KiB.
func chunked(body []byte) []byte {
	var out bytes.Buffer
	for len(body) > 0 {
		n := min(len(body), 64<<10)
		fmt.Fprintf(&out, "%x\r\n", n)
		out.Write(body[:n])
		out.WriteString("\r\n")
		body = body[n:]
	}
	out.WriteString("0\r\n\r\n")
	return out.Bytes()
}

// readFile is GET /api/v1/files/{id}.
func (s *server) readFile(t *testing.T, token, id string) response {
	t.Helper()
	req, err := http.NewRequest("GET", s.base+"/api/v1/files/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	ct := res.Header.Get("Content-Type")
	if res.StatusCode == http.StatusOK {
		if err := contract.ValidateResponse("GET", "/api/v1/files/"+id, 200, ct, b); err != nil {
			t.Errorf("GET file: %v", err)
		}
	} else {
		s.checkUploadResponse(t, "GET", "/api/v1/files/"+id, res, b)
	}
	return response{res.StatusCode, res.Header, b}
}

func testImage(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "shared", "upload", "testdata", "images", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantProblem(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status || r.problem(t) != code {
		t.Fatalf("got %d %s, want %d %s", r.status, r.body, status, code)
	}
}

func TestUploads(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	_, db := s.seed(t)
	ctx := context.Background()
	otherToken, _, err := gate.Issue(ctx, db, ask.Credential{Space: "other", Role: ask.RoleOwner, Actor: ask.Actor{ID: "eve"}, Person: ask.Actor{ID: "eve"}})
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := s.agent(t, ownerToken), s.agent(t, otherToken)
	png, gif := testImage(t, "tiny.png"), testImage(t, "tiny.gif")

	t.Run("ticket", func(t *testing.T) {
		tk := requestUploadVia(t, mine, ask.ImagePNG)
		if !strings.HasPrefix(tk.UploadURL, s.base+"/api/v1/uploads/local/"+upload.TokenPrefix) || tk.MaxBytes != 4<<20 {
			t.Errorf("ticket %+v", tk)
		}
		exp, err := ask.ParseTime(tk.ExpiresAt)
		if err != nil || time.Until(exp) < 14*time.Minute || time.Until(exp) > 15*time.Minute {
			t.Errorf("expiresAt %s, want 15 minutes ahead", tk.ExpiresAt)
		}
		// Only the token's hash is stored.
		raw, err := os.ReadFile(filepath.Join(s.dir, "loopback.db-wal"))
		if err != nil {
			raw, _ = os.ReadFile(filepath.Join(s.dir, "loopback.db"))
		}
		token := tk.UploadURL[strings.LastIndex(tk.UploadURL, "/")+1:]
		if bytes.Contains(raw, []byte(token)) {
			t.Error("the upload token is stored in the clear")
		}
	})

	t.Run("201, then read back", func(t *testing.T) {
		tk := requestUploadVia(t, mine, ask.ImagePNG)
		r := s.putUpload(t, tk.path(t), ask.ImagePNG, png, int64(len(png)))
		if r.status != http.StatusCreated {
			t.Fatalf("PUT: %d %s", r.status, r.body)
		}
		if rec := decode[upload.Receipt](t, r); rec != (upload.Receipt{UploadID: tk.UploadID, ContentType: ask.ImagePNG, Size: int64(len(png))}) {
			t.Errorf("receipt %+v", rec)
		}
		f := s.readFile(t, ownerToken, tk.UploadID)
		if f.status != 200 || !bytes.Equal(f.body, png) {
			t.Fatalf("GET the file: %d, %d bytes", f.status, len(f.body))
		}
		for k, v := range map[string]string{
			"Content-Type": ask.ImagePNG, "X-Content-Type-Options": "nosniff", "Content-Security-Policy": httpapi.FileCSP,
			"Cache-Control": "private, max-age=31536000, immutable",
		} {
			if got := f.header.Get(k); got != v {
				t.Errorf("%s: %q, want %q", k, got, v)
			}
		}
		if r := s.readFile(t, "", tk.UploadID); r.status != 401 {
			t.Errorf("a file without credentials: %d", r.status)
		}
		// 410 for a ticket used already.
		wantProblem(t, s.putUpload(t, tk.path(t), ask.ImagePNG, png, int64(len(png))), 410, ask.EUploadGone)
	})

	t.Run("404 unknown space or token", func(t *testing.T) {
		tk := requestUploadVia(t, mine, ask.ImagePNG)
		token := tk.UploadURL[strings.LastIndex(tk.UploadURL, "/")+1:]
		wantProblem(t, s.putUpload(t, "/api/v1/uploads/nowhere/"+token, ask.ImagePNG, png, int64(len(png))), 404, ask.EUploadNotFound)
		wantProblem(t, s.putUpload(t, "/api/v1/uploads/other/"+token, ask.ImagePNG, png, int64(len(png))), 404, ask.EUploadNotFound)
		fresh, _ := upload.NewToken()
		wantProblem(t, s.putUpload(t, "/api/v1/uploads/local/"+fresh, ask.ImagePNG, png, int64(len(png))), 404, ask.EUploadNotFound)
		wantProblem(t, s.putUpload(t, "/api/v1/uploads/local/"+ownerToken, ask.ImagePNG, png, int64(len(png))), 404, ask.EUploadNotFound)
		// The misses spent nothing.
		if r := s.putUpload(t, tk.path(t), ask.ImagePNG, png, int64(len(png))); r.status != 201 {
			t.Fatalf("the ticket after PUTs to wrong addresses: %d %s", r.status, r.body)
		}
	})

	t.Run("410 expired", func(t *testing.T) {
		token, hash := upload.NewToken()
		now := ask.Truncate(time.Now())
		u := &ask.Upload{ID: ask.NewUploadID(), Space: LocalSpace, TokenHash: hash, ContentType: ask.ImagePNG, MaxBytes: 4 << 20,
			State: ask.UploadPending, CreatedAt: now.Add(-16 * time.Minute), ExpiresAt: now.Add(-time.Minute)}
		if err := db.CreateUpload(ctx, u); err != nil {
			t.Fatal(err)
		}
		r := s.putUpload(t, "/api/v1/uploads/local/"+token, ask.ImagePNG, png, int64(len(png)))
		wantProblem(t, r, 410, ask.EUploadGone)
		if !strings.Contains(string(r.body), "expired") {
			t.Errorf("the 410 does not say it expired: %s", r.body)
		}
	})

	t.Run("refusals spend nothing", func(t *testing.T) {
		tk := requestUploadVia(t, mine, ask.ImagePNG)
		p := tk.path(t)
		big := append(bytes.Clone(png), make([]byte, 4<<20)...)
		t.Run("413 declared", func(t *testing.T) {
			wantProblem(t, s.putUpload(t, p, ask.ImagePNG, big, int64(len(big))), 413, ask.EUploadTooLarge)
		})
		t.Run("413 chunked", func(t *testing.T) {
			wantProblem(t, s.putUpload(t, p, ask.ImagePNG, big, -1), 413, ask.EUploadTooLarge)
		})
		t.Run("413 lying small Content-Length", func(t *testing.T) {
			// Content-Length says 100; the body, chunked, is over 4 MiB. The length that counts
			// is what arrives, read up to maxBytes + 1.
			status, body := s.rawPut(t, p, []string{"Content-Type: image/png", "Content-Length: 100", "Transfer-Encoding: chunked"}, chunked(big))
			if status != 413 || !strings.Contains(string(body), ask.EUploadTooLarge) {
				t.Fatalf("got %d %s, want 413", status, body)
			}
		})
		t.Run("413 exactly maxBytes plus one", func(t *testing.T) {
			wantProblem(t, s.putUpload(t, p, ask.ImagePNG, big[:4<<20+1], -1), 413, ask.EUploadTooLarge)
		})
		t.Run("422 wrong Content-Type", func(t *testing.T) {
			wantProblem(t, s.putUpload(t, p, ask.ImageJPEG, png, int64(len(png))), 422, ask.EUploadInvalid)
			wantProblem(t, s.putUpload(t, p, "", png, int64(len(png))), 422, ask.EUploadInvalid)
			wantProblem(t, s.putUpload(t, p, "text/html", png, int64(len(png))), 422, ask.EUploadInvalid)
		})
		t.Run("422 SVG labelled image/png", func(t *testing.T) {
			svg := testImage(t, "drawing.svg")
			wantProblem(t, s.putUpload(t, p, ask.ImagePNG, svg, int64(len(svg))), 422, ask.EUploadInvalid)
		})
		t.Run("422 HTML labelled image/png", func(t *testing.T) {
			html := testImage(t, "page.html")
			wantProblem(t, s.putUpload(t, p, ask.ImagePNG, html, int64(len(html))), 422, ask.EUploadInvalid)
			polyglot := append([]byte("\x89PNG\r\n\x1a\n"), html...)
			wantProblem(t, s.putUpload(t, p, ask.ImagePNG, polyglot, int64(len(polyglot))), 422, ask.EUploadInvalid)
		})
		t.Run("422 a GIF labelled image/png", func(t *testing.T) {
			wantProblem(t, s.putUpload(t, p, ask.ImagePNG, gif, int64(len(gif))), 422, ask.EUploadInvalid)
		})
		t.Run("422 empty body", func(t *testing.T) {
			wantProblem(t, s.putUpload(t, p, ask.ImagePNG, nil, 0), 422, ask.EUploadInvalid)
			wantProblem(t, s.putUpload(t, p, ask.ImagePNG, nil, -1), 422, ask.EUploadInvalid)
		})
		// A refused PUT releases its claim: the same URL still takes the image, once.
		if r := s.putUpload(t, p, ask.ImagePNG, png, int64(len(png))); r.status != 201 {
			t.Fatalf("the ticket after refusals: %d %s", r.status, r.body)
		}
		wantProblem(t, s.putUpload(t, p, ask.ImagePNG, png, int64(len(png))), 410, ask.EUploadGone)
	})

	t.Run("a Content-Length shorter than the body", func(t *testing.T) {
		// HTTP's framing: the body is the declared 100 bytes; what follows is not part of it (the
		// server refuses it as a request of its own). Nothing past the declared length is stored.
		tk := requestUploadVia(t, mine, ask.ImagePNG)
		big := append(bytes.Clone(png), make([]byte, 5<<20)...)
		status, body := s.rawPut(t, tk.path(t), []string{"Content-Type: image/png", "Content-Length: 100"}, big)
		if status != 201 {
			t.Fatalf("got %d %s", status, body)
		}
		var rec upload.Receipt
		json.Unmarshal(body, &rec)
		if rec.Size != 100 {
			t.Fatalf("stored %d bytes, want the 100 declared", rec.Size)
		}
		if f := s.readFile(t, ownerToken, tk.UploadID); len(f.body) != 100 {
			t.Fatalf("the file is %d bytes", len(f.body))
		}
	})

	t.Run("two PUTs racing on one ticket", func(t *testing.T) {
		for round := range 8 {
			tk := requestUploadVia(t, mine, ask.ImagePNG)
			const n = 2 + 4
			statuses := make([]int, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					req, _ := http.NewRequest("PUT", tk.UploadURL, bytes.NewReader(png))
					req.Header.Set("Content-Type", ask.ImagePNG)
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					statuses[i] = res.StatusCode
				}()
			}
			close(start)
			wg.Wait()
			created := 0
			for _, st := range statuses {
				switch st {
				case 201:
					created++
				case 410:
				default:
					t.Errorf("round %d: a racing PUT got %d", round, st)
				}
			}
			if created != 1 {
				t.Fatalf("round %d: %d of %d racing PUTs got 201 (%v), want exactly 1", round, created, n, statuses)
			}
		}
	})

	t.Run("path traversal", func(t *testing.T) {
		tk := requestUploadVia(t, mine, ask.ImagePNG)
		token := tk.UploadURL[strings.LastIndex(tk.UploadURL, "/")+1:]
		before := dataFiles(t, s.dir)
		parent := entries(t, filepath.Dir(s.dir))
		for _, p := range []string{
			"/api/v1/uploads/..%2F..%2F..%2Ftmp/" + token,
			"/api/v1/uploads/local/..%2F..%2F..%2F..%2Ftmp%2Fpwned",
			"/api/v1/uploads/local/" + token + "%2F..%2F..%2Fx",
			"/api/v1/uploads/%2E%2E/" + token,
			"/api/v1/uploads/local%2F..%2F..%2Fblobs/" + token,
			"/api/v1/uploads/..%5C..%5Cx/" + token,
			"/api/v1/uploads/local/..%5C..%5C" + token,
			"/api/v1/uploads/local/../../../tmp/" + token,
			"/api/v1/uploads/local/./" + token,
			"/api/v1/uploads/./local/" + token,
			"/api/v1/uploads//local/" + token,
			"/api/v1/uploads/local/" + token + "%00.png",
			"/api/v1/uploads/local%00/" + token,
			"/api/v1/uploads/%2Fetc/" + token,
		} {
			t.Run(p, func(t *testing.T) {
				u, err := url.Parse(s.base + p)
				if err != nil {
					t.Fatal(err)
				}
				req := &http.Request{Method: "PUT", URL: u, Host: u.Host, Header: http.Header{"Content-Type": {ask.ImagePNG}},
					Body: io.NopCloser(bytes.NewReader(png)), ContentLength: int64(len(png))}
				res, err := http.DefaultTransport.RoundTrip(req) // never follows a redirect
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 404 {
					t.Fatalf("%d %s, want 404", res.StatusCode, b)
				}
				var prob httpapi.Problem
				if json.Unmarshal(b, &prob) != nil || !strings.HasSuffix(prob.Code, "not_found") {
					t.Fatalf("not a not_found Problem: %s", b)
				}
			})
		}
		for _, id := range []string{"..%2Floopback.db", "..%2F..%2Fowner.token", "%2E%2E", "up_x%2F..%2F..", tk.UploadID + ".meta"} {
			if r := s.readFile(t, ownerToken, id); r.status != 404 {
				t.Errorf("GET /api/v1/files/%s: %d", id, r.status)
			}
		}
		if after := dataFiles(t, s.dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Errorf("the data folder changed:\nbefore %v\nafter  %v", before, after)
		}
		if after := entries(t, filepath.Dir(s.dir)); strings.Join(after, " ") != strings.Join(parent, " ") {
			t.Errorf("files appeared beside the data folder: %v, was %v", after, parent)
		}
		// The ticket was never touched.
		if r := s.putUpload(t, tk.path(t), ask.ImagePNG, png, int64(len(png))); r.status != 201 {
			t.Fatalf("the ticket after the probes: %d %s", r.status, r.body)
		}
		checkBlobNames(t, s.dir)
	})

	t.Run("spaces never cross", func(t *testing.T) {
		ours := requestUploadVia(t, mine, ask.ImagePNG)
		if r := s.putUpload(t, ours.path(t), ask.ImagePNG, png, int64(len(png))); r.status != 201 {
			t.Fatal(r.status)
		}
		foreign := requestUploadVia(t, theirs, ask.ImageGIF)
		if !strings.Contains(foreign.UploadURL, "/api/v1/uploads/other/") {
			t.Fatalf("their ticket: %s", foreign.UploadURL)
		}
		if r := s.putUpload(t, foreign.path(t), ask.ImageGIF, gif, int64(len(gif))); r.status != 201 {
			t.Fatal(r.status)
		}
		wantProblem(t, s.readFile(t, otherToken, ours.UploadID), 404, ask.EUploadNotFound)
		wantProblem(t, s.readFile(t, ownerToken, foreign.UploadID), 404, ask.EUploadNotFound)
		if r := s.readFile(t, otherToken, foreign.UploadID); r.status != 200 || !bytes.Equal(r.body, gif) || r.header.Get("Content-Type") != ask.ImageGIF {
			t.Fatalf("their own file: %d %s", r.status, r.header.Get("Content-Type"))
		}
		// Their ticket's token does not work in our space's URL either.
		fToken := foreign.UploadURL[strings.LastIndex(foreign.UploadURL, "/")+1:]
		wantProblem(t, s.putUpload(t, "/api/v1/uploads/local/"+fToken, ask.ImageGIF, gif, int64(len(gif))), 404, ask.EUploadNotFound)

		// An image block naming their upload refuses the call and names the block.
		var req mcp.CallToolRequest
		req.Params.Name = "request_review"
		req.Params.Arguments = map[string]any{"title": "Screens", "project": "alpha", "content": []map[string]any{
			{"type": "markdown", "text": "Before and after:"},
			{"type": "image", "uploadId": ours.UploadID, "caption": "before"},
			{"type": "image", "uploadId": foreign.UploadID, "caption": "after"},
		}}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		res, err := mine.CallTool(cctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if msg := textOf(res); !res.IsError || !strings.Contains(msg, "content[2].uploadId") || !strings.Contains(msg, foreign.UploadID) {
			t.Fatalf("an image block of another space's upload: error %v, %s", res.IsError, msg)
		}
		snap := decode[events.DecodedSnapshot](t, s.do(t, "GET", "/api/v1/snapshot", ownerToken, ""))
		if len(snap.Open) != 0 {
			t.Fatalf("the refused review was stored: %d open asks", len(snap.Open))
		}
	})

	t.Run("the printed command, run as it is", func(t *testing.T) {
		if _, err := exec.LookPath("curl"); err != nil {
			t.Fatal("curl is needed to run the printed command: install curl")
		}
		tk := requestUploadVia(t, mine, ask.ImagePNG)
		if !strings.Contains(tk.Command, "FILE") {
			t.Fatalf("the command has no FILE: %s", tk.Command)
		}
		dir := filepath.Join(t.TempDir(), "screen shots") // a path with a space, as people have
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "after fix.png")
		if err := os.WriteFile(file, png, 0o644); err != nil {
			t.Fatal(err)
		}
		line := strings.ReplaceAll(tk.Command, "FILE", file)
		cmd := exec.Command("sh", "-c", line)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s\n→ %v\nstdout: %s\nstderr: %s", line, err, stdout.String(), stderr.String())
		}
		if err := contract.ValidateModel("UploadReceipt", stdout.Bytes()); err != nil {
			t.Fatalf("the command printed %s: %v", stdout.String(), err)
		}
		if r := s.readFile(t, ownerToken, tk.UploadID); r.status != 200 || !bytes.Equal(r.body, png) {
			t.Fatalf("the uploaded file: %d, %d bytes", r.status, len(r.body))
		}
		// Run again, the command fails (exit status non-zero) and prints the Problem.
		cmd = exec.Command("sh", "-c", line)
		out, err := cmd.Output()
		if err == nil || !strings.Contains(string(out), ask.EUploadGone) {
			t.Fatalf("the command a second time: %v %s", err, out)
		}

		// The image then shows in a review, which the person sees.
		var req mcp.CallToolRequest
		req.Params.Name = "request_review"
		req.Params.Arguments = map[string]any{"title": "The fix", "project": "alpha", "content": []map[string]any{
			{"type": "image", "uploadId": tk.UploadID, "caption": "after the fix"},
		}}
		call := startCall(t, mine, req)
		var id string
		eventually(t, "the review opens", func() bool {
			snap := decode[events.DecodedSnapshot](t, s.do(t, "GET", "/api/v1/snapshot", ownerToken, ""))
			if len(snap.Open) == 1 {
				id = snap.Open[0].ID
			}
			return id != ""
		})
		a := decode[ask.Ask](t, s.do(t, "GET", "/api/v1/asks/"+id, ownerToken, ""))
		if a.Review == nil || a.Review.Content[0].UploadID != tk.UploadID {
			t.Fatalf("the review shows %+v", a.Review)
		}
		s.reply(t, ownerToken, id, `{"outcome":"approved"}`)
		if res := call.wait(t); !strings.Contains(textOf(res), "approved") {
			t.Fatalf("request_review returned %s", textOf(res))
		}
	})
}

// startCall runs a tool call in the background; wait returns its result.
func startCall(t *testing.T, c *client.Client, req mcp.CallToolRequest) *call {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	p := &call{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.res, p.err = c.CallTool(ctx, req)
	}()
	t.Cleanup(func() { cancel(); <-p.done })
	return p
}

// dataFiles lists every file and folder under the data folder, relative to it, without the
// database's own files (SQLite writes them as it likes).
func dataFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !strings.HasPrefix(rel, "loopback.db") {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// checkBlobNames: everything under DIR/blobs is a space hash folder holding upload ids and their
// metadata, nothing else.
func checkBlobNames(t *testing.T, dir string) {
	t.Helper()
	ok := regexp.MustCompile(`^blobs(/[0-9a-f]{32}(/up_[a-z2-7]{26}(\.meta)?)?)?$`)
	for _, f := range dataFiles(t, dir) {
		if f == "." || f == "owner.token" || f == "agent.token" || f == "vapid.json" || f == actionKeyFile {
			continue
		}
		if slash := filepath.ToSlash(f); slash == "claude-code-plugin" || strings.HasPrefix(slash, "claude-code-plugin/") {
			continue // the Claude Code plugin serve writes out (integrations/claude-code)
		}
		if !ok.MatchString(filepath.ToSlash(f)) {
			t.Errorf("unexpected file in the data folder: %s", f)
		}
	}
}
