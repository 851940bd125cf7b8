package mcptools_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
)

// uploadTicket is the contract's UploadTicket as a test reads it.
type uploadTicket struct {
	UploadID  string    `json:"uploadId"`
	UploadURL string    `json:"uploadUrl"`
	ExpiresAt time.Time `json:"expiresAt"`
	MaxBytes  int64     `json:"maxBytes"`
	Command   string    `json:"command"`
}

// requestUpload calls request_upload and checks its result is an UploadTicket, carried as
// structuredContent and as the same JSON in text.
func requestUpload(t *testing.T, c *client.Client, contentType string) uploadTicket {
	t.Helper()
	res := callTool(t, c, "request_upload", map[string]any{"contentType": contentType})
	if res.IsError {
		t.Fatalf("request_upload: %s", resultText(res))
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.ValidateModel("UploadTicket", structured); err != nil {
		t.Fatalf("structuredContent is not an UploadTicket: %v\n%s", err, structured)
	}
	if !jsonEqual(t, structured, []byte(resultText(res))) {
		t.Fatalf("the text is not the structured content: %s", resultText(res))
	}
	var tk uploadTicket
	if err := json.Unmarshal(structured, &tk); err != nil {
		t.Fatal(err)
	}
	return tk
}

// put sends bytes to an upload URL, with no credentials, and returns the status and body.
func put(t *testing.T, url, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("PUT", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func tinyPNG(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../upload/testdata/images/tiny.png")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRequestUpload: a ticket in the caller's space, under the deployment's URL, for 15 minutes
// and 4 MiB; then the image it stored shown in a review.
func TestRequestUpload(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})
	before := time.Now()
	tk := requestUpload(t, c, ask.ImagePNG)
	if !strings.HasPrefix(tk.UploadURL, d.URL+"/api/v1/uploads/"+testSpace+"/lbu_") || !ask.ValidUploadID(tk.UploadID) {
		t.Errorf("ticket %+v", tk)
	}
	if tk.MaxBytes != 4<<20 {
		t.Errorf("maxBytes %d, want 4 MiB", tk.MaxBytes)
	}
	if tk.ExpiresAt.Before(before.Add(15*time.Minute-time.Second)) || tk.ExpiresAt.After(time.Now().Add(15*time.Minute)) {
		t.Errorf("expiresAt %v, want 15 minutes from now", tk.ExpiresAt)
	}
	if !strings.Contains(tk.Command, "'Content-Type: image/png'") || !strings.Contains(tk.Command, `"@FILE"`) || !strings.HasSuffix(tk.Command, "'"+tk.UploadURL+"'") {
		t.Errorf("command %s", tk.Command)
	}

	if status, body := put(t, tk.UploadURL, ask.ImagePNG, tinyPNG(t)); status != http.StatusCreated {
		t.Fatalf("PUT: %d %s", status, body)
	}
	in := review("loopback", "")
	in["content"] = append(in["content"].([]map[string]any), map[string]any{"type": "image", "uploadId": tk.UploadID, "caption": "after"})
	p := startTool(t, c, "request_review", in)
	id := d.waitingAsk(t, 1).ID
	status, body := d.api(t, d.Token, "GET", "/api/v1/asks/"+id, nil)
	if status != 200 || !strings.Contains(string(body), `{"type":"image","uploadId":"`+tk.UploadID+`","caption":"after"}`) {
		t.Fatalf("the review does not show the image: %s", body)
	}
	d.reply(t, id, map[string]any{"outcome": "approved"})
	if tr := toolReply(t, p.result(t)); tr.Reply.Outcome != ask.OutcomeApproved {
		t.Fatalf("reply %+v", tr.Reply)
	}
}

// TestRequestUploadRefusals: a type the contract does not take, an unknown field; and image blocks
// naming an upload of another space, or one never stored, refuse the call and name the block.
func TestRequestUploadRefusals(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})
	for _, args := range []map[string]any{{"contentType": "image/svg+xml"}, {}, {"contentType": "image/png", "name": "x.png"}} {
		msg := toolErr(t, callTool(t, c, "request_upload", args))
		if !strings.HasPrefix(msg, ask.EInputInvalid) {
			t.Errorf("%v: %s", args, msg)
		}
	}

	theirs := d.connect(t, clientOpts{Token: d.otherSpace(t)})
	foreign := requestUpload(t, theirs, ask.ImageGIF)
	if !strings.Contains(foreign.UploadURL, "/api/v1/uploads/elsewhere/") {
		t.Fatalf("another space's ticket: %s", foreign.UploadURL)
	}
	gif, err := os.ReadFile("../upload/testdata/images/tiny.gif")
	if err != nil {
		t.Fatal(err)
	}
	if status, body := put(t, foreign.UploadURL, ask.ImageGIF, gif); status != http.StatusCreated {
		t.Fatalf("PUT: %d %s", status, body)
	}
	unused := requestUpload(t, c, ask.ImagePNG)
	for _, id := range []string{foreign.UploadID, unused.UploadID} {
		in := review("loopback", "")
		in["content"] = append(in["content"].([]map[string]any), map[string]any{"type": "image", "uploadId": id})
		msg := toolErr(t, callTool(t, c, "request_review", in))
		if !strings.Contains(msg, "content[2].uploadId") || !strings.Contains(msg, id) || !strings.HasPrefix(msg, ask.EInputInvalid) {
			t.Errorf("image block naming %s: %s", id, msg)
		}
	}
	if n := d.askCount(t); n != 0 {
		t.Fatalf("refused reviews made %d asks", n)
	}
}
