package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/blobs3"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/upload"
)

// TestServeOnDynamoDB runs `loopback serve --store dynamodb --table … --bucket … --create` against
// moto, configured the way a person would (the standard AWS_* variables, AWS_ENDPOINT_URL for the
// emulator): the table and bucket are created, the owner's credential lands in the table, a
// person's reply reaches the ask in DynamoDB, and an uploaded image lands in S3. A missing
// moto_server fails the test.
func TestServeOnDynamoDB(t *testing.T) {
	moto, err := awstest.Start()
	if err != nil {
		t.Fatalf("%v (the AWS tests need moto_server: make setup installs it)", err)
	}
	t.Cleanup(moto.Close)
	table, bucket := awstest.Name("serve"), awstest.Name("serve-images")
	nowhere := filepath.Join(t.TempDir(), "none")
	const token = "lbt_dynamo_owner_token_for_the_test"
	s := startServe(t, 30*time.Second, map[string]string{
		"AWS_ENDPOINT_URL": moto.URL, "AWS_REGION": awstest.Region,
		"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": nowhere, "AWS_SHARED_CREDENTIALS_FILE": nowhere,
		"LOOPBACK_TOKEN": token, "LOOPBACK_STORE": "", "LOOPBACK_TABLE": "", "LOOPBACK_BUCKET": "",
	}, "--store", "dynamodb", "--table", table, "--bucket", bucket, "--create")
	base := s.base
	if !strings.Contains(s.log.String(), "store=\"dynamodb:"+table+" s3:"+bucket+"\"") {
		t.Errorf("the log does not say the store is the table and bucket:\n%s", s.log.String())
	}

	call := func(method, path string, body io.Reader, headers ...string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	if code, body := call("GET", "/api/v1/whoami", nil); code != http.StatusOK || !strings.Contains(string(body), `"space":"local"`) {
		t.Fatalf("whoami: %d %s", code, body)
	}

	// What an agent would ask over MCP, written straight to the table.
	store := dynamo.New(moto.DynamoDB(), table)
	svc := ask.NewService(store)
	q, err := svc.AskQuestion(context.Background(), ask.QuestionInput{
		Question: "Ship it?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}, Project: "loopback",
	}, ask.Origin{Space: LocalSpace})
	if err != nil {
		t.Fatal(err)
	}
	if code, body := call("GET", "/api/v1/snapshot", nil); code != http.StatusOK || !strings.Contains(string(body), q.ID) {
		t.Fatalf("snapshot: %d %s", code, body)
	}
	if code, body := call("POST", "/api/v1/asks/"+q.ID+"/reply", strings.NewReader(`{"outcome":"answered","selected":["Yes"]}`),
		"Content-Type", "application/json"); code != http.StatusOK {
		t.Fatalf("reply: %d %s", code, body)
	}
	got, err := store.FindAsk(context.Background(), LocalSpace, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != ask.Closed || got.Version != 2 {
		t.Fatalf("after the reply the ask in DynamoDB is %s at version %d, want closed at 2", got.Status, got.Version)
	}

	// An image: the ticket in the table, the bytes in the bucket.
	uploads := &upload.Service{Store: store, Blobs: blobs3.New(moto.S3(), bucket)}
	tk, err := uploads.Issue(context.Background(), LocalSpace, "cred_test", ask.ImagePNG, base)
	if err != nil {
		t.Fatal(err)
	}
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	path := strings.TrimPrefix(tk.UploadURL, base)
	if code, body := call("PUT", path, bytes.NewReader(img.Bytes()), "Content-Type", ask.ImagePNG); code != http.StatusCreated {
		t.Fatalf("upload PUT: %d %s", code, body)
	}
	key, err := ask.UploadBlobKey(LocalSpace, tk.UploadID)
	if err != nil {
		t.Fatal(err)
	}
	rc, info, err := blobs3.New(moto.S3(), bucket).OpenBlob(context.Background(), key)
	if err != nil {
		t.Fatalf("the image is not in the bucket: %v", err)
	}
	stored, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(stored, img.Bytes()) || info.ContentType != ask.ImagePNG {
		t.Fatalf("the bucket holds %d bytes of %s, want the %d-byte PNG", len(stored), info.ContentType, img.Len())
	}
	if code, body := call("GET", "/api/v1/files/"+tk.UploadID, nil); code != http.StatusOK || !bytes.Equal(body, img.Bytes()) {
		t.Fatalf("reading the image back: %d, %d bytes", code, len(body))
	}

	// `loopback token` manages the table's credentials as it does SQLite's: the new agent token
	// opens the space the server serves from the table.
	var tokOut, tokErr bytes.Buffer
	if err := run(context.Background(), []string{"token", "create", "--name", "cursor", "--data", t.TempDir(), "--store", "dynamodb", "--table", table}, &tokOut, &tokErr); err != nil {
		t.Fatalf("token create on DynamoDB: %v %s", err, tokErr.String())
	}
	agentToken := ""
	for _, f := range strings.Fields(tokOut.String()) {
		if strings.HasPrefix(f, gate.TokenPrefix) {
			agentToken = f
		}
	}
	req, _ := http.NewRequest("GET", base+"/api/v1/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+agentToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	whoami, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if agentToken == "" || res.StatusCode != http.StatusOK || !strings.Contains(string(whoami), `"name":"cursor"`) {
		t.Fatalf("the token made on DynamoDB (%q) gets %d %s", agentToken, res.StatusCode, whoami)
	}
}
