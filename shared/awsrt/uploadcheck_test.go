package awsrt_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
)

// bigJPEG writes a valid JPEG of 3×2 pixels whose header sits after about mib MiB of APP15
// segments, as a camera's EXIF and ICC data can push a real JPEG's dimensions megabytes in, and
// returns its path.
func bigJPEG(t *testing.T, mib int) (string, int64) {
	t.Helper()
	var small bytes.Buffer
	if err := jpeg.Encode(&small, image.NewGray(image.Rect(0, 0, 3, 2)), nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "big photo.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seg := make([]byte, 2+2+65533)
	seg[0], seg[1], seg[2], seg[3] = 0xFF, 0xEF, 0xFF, 0xFF // APP15, length 65535 (itself included)
	if _, err := f.Write(small.Bytes()[:2]); err != nil {   // SOI
		t.Fatal(err)
	}
	for range mib * 16 {
		if _, err := f.Write(seg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Write(small.Bytes()[2:]); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return f.Name(), st.Size()
}

// TestServerlessUploadCheckMemory: the checker reads only what the image check needs (the size
// from the object's head, the type and dimensions from a stream read up to the header), so a
// 64 MiB JPEG whose header sits at its end is checked in a few hundred KB of allocations, where
// reading the whole object took three times its size (out of memory past 70–80 MiB on a 256 MB
// function).
func TestServerlessUploadCheckMemory(t *testing.T) {
	d := deploy(t)
	ctx := context.Background()
	d.rt.Uploads.MaxBytes = 100 << 20 // a deployment that raised MaxUploadBytes
	tk, err := d.rt.Uploads.Issue(ctx, "sp_images", "cred_test", ask.ImageJPEG, "")
	if err != nil {
		t.Fatal(err)
	}
	path, size := bigJPEG(t, 64)
	if _, out, err := runCommand(t, tk.Command, path); err != nil {
		t.Fatalf("the PUT: %v %s", err, out)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d.objectCreated(t, tk.UploadID, "sp_images")
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("checking a %d-byte JPEG allocated %d bytes (%.2f MiB)", size, allocated, float64(allocated)/(1<<20))
	if allocated > 8<<20 {
		t.Errorf("checking a %d MiB JPEG allocated %.1f MiB: the check reads more than it needs", size>>20, float64(allocated)/(1<<20))
	}
	u, err := d.rt.Store.StoredUpload(ctx, "sp_images", tk.UploadID)
	if err != nil || u.Size != size {
		t.Fatalf("the big JPEG = %+v, %v; want it stored with %d bytes", u, err, size)
	}
}

// TestServerlessUploadCheckAfterCrash: a check that claimed an upload and then died (out of
// memory, a timeout) leaves it claimed; the event's retry gives the verdict rather than taking
// "claimed" for another check at work, and until then the upload is never shown.
func TestServerlessUploadCheckAfterCrash(t *testing.T) {
	d := deploy(t)
	ctx := context.Background()
	tk, err := d.rt.Uploads.Issue(ctx, "sp_images", "cred_test", ask.ImagePNG, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, out, err := runCommand(t, tk.Command, writeFile(t, t.TempDir(), "x.png", pngBytes(t))); err != nil {
		t.Fatalf("the PUT: %v %s", err, out)
	}
	// The first delivery claimed it and died.
	if _, err := d.rt.Store.ClaimUpload(ctx, "sp_images", tk.UploadID, ask.Truncate(tk.ExpiresAt.Add(-ask.UploadTTL))); err != nil {
		t.Fatal(err)
	}
	if _, err := d.rt.Store.StoredUpload(ctx, "sp_images", tk.UploadID); ask.ErrorCode(err) != ask.EUploadNotFound {
		t.Fatalf("a claimed upload is shown: %v", err)
	}
	d.objectCreated(t, tk.UploadID, "sp_images") // the retry
	if u, err := d.rt.Store.StoredUpload(ctx, "sp_images", tk.UploadID); err != nil {
		t.Fatalf("after the retry: %+v, %v; want it stored", u, err)
	}
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestServerlessUploadSpotCheck: S3's event can take a minute to reach the checker (five after
// the bucket's notifications were turned on), so an image block naming an upload whose verdict
// has not arrived checks the object on the spot, with the same rules: no event is delivered here
// at all. A block naming an upload whose bytes were never sent is told so at once, in words.
func TestServerlessUploadSpotCheck(t *testing.T) {
	d := deploy(t)
	ctx := context.Background()
	token := d.owner(t, "sp_images", "ada")
	agent, _, _ := d.agent(t, token)
	dir := t.TempDir()
	review := func(uploadID string) *mcp.CallToolResult {
		t.Helper()
		var req mcp.CallToolRequest
		req.Params.Name = "request_review"
		req.Params.Arguments = map[string]any{"title": "Spot", "project": "alpha", "content": []map[string]any{
			{"type": "image", "uploadId": uploadID},
		}}
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		res, _ := agent.CallTool(cctx, req) // the open review's wait ends with its context
		return res
	}

	// Not sent yet: said at once.
	unsent := requestUpload(t, agent)
	start := time.Now()
	res := review(unsent.UploadID)
	if res == nil || !res.IsError || !strings.Contains(toolText(res), "no image has arrived") {
		t.Fatalf("a review naming an upload never sent = %s", toolText(res))
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the refusal took %s", took)
	}

	// An SVG labelled PNG, named before any event: refused with the reason, the object deleted.
	svg := requestUpload(t, agent)
	if _, out, err := runCommand(t, svg.Command, writeFile(t, dir, "logo.png", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))); err != nil {
		t.Fatalf("the SVG's PUT: %v %s", err, out)
	}
	if res := review(svg.UploadID); res == nil || !res.IsError || !strings.Contains(toolText(res), "SVG") {
		t.Fatalf("a review naming the SVG = %s", toolText(res))
	}
	d.wantRefused(t, svg.UploadID, "SVG")

	// A PNG, named before any event: checked on the spot, the review opens (the call then
	// waits for the person, which this test does not need).
	tk := requestUpload(t, agent)
	if _, out, err := runCommand(t, tk.Command, writeFile(t, dir, "ok.png", pngBytes(t))); err != nil {
		t.Fatalf("the PUT: %v %s", err, out)
	}
	go review(tk.UploadID)
	eventually(t, "the review opens", func() bool {
		snap, err := d.rt.Service.Snapshot(ctx, "sp_images")
		return err == nil && len(snap.Open) == 1
	})
	if _, err := d.rt.Store.StoredUpload(ctx, "sp_images", tk.UploadID); err != nil {
		t.Fatalf("the PNG after the spot check: %v", err)
	}
	d.objectCreated(t, tk.UploadID, "sp_images") // the event, when it comes, finds the verdict given
}

// TestServerlessUploadCapsAndReap, on DynamoDB and S3: request_upload refuses a credential's
// tickets past the cap with a tool error that says why and when; the sweeper function deletes an
// image no ask shows a day after its ticket expired (the object and the items), and keeps the one
// a review shows.
func TestServerlessUploadCapsAndReap(t *testing.T) {
	d := deploy(t)
	ctx := context.Background()
	d.rt.Uploads.MaxPerWindow = 3
	token := d.owner(t, "sp_images", "ada")
	agent, _, _ := d.agent(t, token)
	dir := t.TempDir()
	shown, unnamed := requestUpload(t, agent), requestUpload(t, agent)
	for _, tk := range []ticket{shown, unnamed} {
		if _, out, err := runCommand(t, tk.Command, writeFile(t, dir, tk.UploadID+".png", pngBytes(t))); err != nil {
			t.Fatalf("the PUT: %v %s", err, out)
		}
		d.objectCreated(t, tk.UploadID, "sp_images")
	}
	unused := requestUpload(t, agent)

	var req mcp.CallToolRequest
	req.Params.Name = "request_upload"
	req.Params.Arguments = map[string]any{"contentType": "image/png"}
	res, err := agent.CallTool(ctx, req)
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "3 upload addresses") {
		t.Fatalf("the 4th request_upload of 3 = %s, %v", toolText(res), err)
	}

	req.Params.Name = "request_review"
	req.Params.Arguments = map[string]any{"title": "Kept", "project": "alpha", "content": []map[string]any{
		{"type": "image", "uploadId": shown.UploadID},
	}}
	go func() {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		agent.CallTool(cctx, req) // waits for the person until cancelled
	}()
	eventually(t, "the review opens", func() bool {
		snap, err := d.rt.Service.Snapshot(ctx, "sp_images")
		return err == nil && len(snap.Open) == 1
	})

	if n, err := d.rt.Sweep(ctx); err != nil {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	for _, id := range []string{shown.UploadID, unnamed.UploadID} {
		if _, err := d.rt.Store.StoredUpload(ctx, "sp_images", id); err != nil {
			t.Fatalf("%s reaped within the grace: %v", id, err)
		}
	}
	d.rt.Uploads.Now = func() time.Time { return ask.Truncate(time.Now().Add(ask.UploadTTL + ask.UploadGrace + time.Minute)) }
	if n, err := d.rt.Sweep(ctx); err != nil {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	for _, id := range []string{unnamed.UploadID, unused.UploadID} {
		key, _ := ask.UploadBlobKey("sp_images", id)
		if _, err := d.rt.Store.UploadByBlob(ctx, key); ask.ErrorCode(err) != ask.EUploadNotFound {
			t.Errorf("%s after the sweep: %v", id, err)
		}
		if _, _, err := d.rt.Blobs.StatBlob(ctx, key); !errors.Is(err, ask.ErrBlobNotFound) {
			t.Errorf("the object of %s after the sweep: %v", id, err)
		}
	}
	key, _ := ask.UploadBlobKey("sp_images", shown.UploadID)
	if _, err := d.rt.Store.StoredUpload(ctx, "sp_images", shown.UploadID); err != nil {
		t.Fatalf("the image a review shows was reaped: %v", err)
	}
	if _, _, err := d.rt.Blobs.StatBlob(ctx, key); err != nil {
		t.Fatalf("the object of the image a review shows: %v", err)
	}
}
