package upload_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/blobfs"
	"github.com/loopback-hq/loopback/shared/sqlite"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
	"github.com/loopback-hq/loopback/shared/upload"
)

type rig struct {
	svc *upload.Service
	db  *sqlite.DB
	now time.Time
	mu  sync.Mutex
}

func (r *rig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *rig) advance(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = r.now.Add(d)
}

// newRig is the upload service on real SQLite and real files, with a clock the test moves.
func newRig(t *testing.T) *rig {
	t.Helper()
	dir := t.TempDir()
	db := sqlitetest.OpenAt(t, filepath.Join(dir, "loopback.db"))
	blobs, err := blobfs.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{db: db, now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	r.svc = &upload.Service{Store: db, Blobs: blobs, Now: r.clock}
	return r
}

// ticket issues a ticket and returns it with the space and token of its URL.
func (r *rig) ticket(t *testing.T, space, ct string) (tk *upload.Ticket, token string) {
	t.Helper()
	tk, err := r.svc.Issue(context.Background(), space, "cred_test", ct, "http://127.0.0.1:9/")
	if err != nil {
		t.Fatal(err)
	}
	return tk, tk.UploadURL[strings.LastIndex(tk.UploadURL, "/")+1:]
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := ask.ErrorCode(err); got != code {
		t.Fatalf("got %v (code %q), want %s", err, got, code)
	}
}

// refuseReads fails the test if anything reads it: a body that must be refused unread.
type refuseReads struct{ t *testing.T }

func (r refuseReads) Read([]byte) (int, error) {
	r.t.Error("the body was read")
	return 0, io.EOF
}

func TestIssue(t *testing.T) {
	r := newRig(t)
	tk, token := r.ticket(t, "local", ask.ImageGIF)
	if !ask.ValidUploadID(tk.UploadID) || tk.MaxBytes != 4<<20 || !tk.ExpiresAt.Equal(r.now.Add(15*time.Minute)) {
		t.Errorf("ticket %+v", tk)
	}
	if want := "http://127.0.0.1:9/api/v1/uploads/local/" + token; tk.UploadURL != want {
		t.Errorf("url %s, want %s", tk.UploadURL, want)
	}
	if !strings.HasPrefix(token, upload.TokenPrefix) || len(token) != len(upload.TokenPrefix)+43 {
		t.Errorf("token %q is not 256 bits of base64url after the prefix", token)
	}
	want := `curl --fail-with-body -sS -X PUT -H 'Content-Type: image/gif' --data-binary "@FILE" '` + tk.UploadURL + `'`
	if tk.Command != want {
		t.Errorf("command\n %s\nwant\n %s", tk.Command, want)
	}
	u, err := r.db.StoredUpload(context.Background(), "local", tk.UploadID)
	wantCode(t, err, ask.EUploadNotFound)
	_ = u
	if _, err := r.svc.Issue(context.Background(), "local", "cred_test", "image/svg+xml", "http://x"); ask.ErrorCode(err) != ask.EInputInvalid {
		t.Errorf("a ticket for SVG: %v", err)
	}
	// A space with characters a URL must escape is escaped, and the command quotes the URL.
	tk, _ = r.ticket(t, "team a's", ask.ImagePNG)
	if !strings.Contains(tk.UploadURL, "/uploads/team%20a%27s/") || !strings.HasSuffix(tk.Command, `'`+tk.UploadURL+`'`) {
		t.Errorf("url %s, command %s", tk.UploadURL, tk.Command)
	}
}

func TestPut(t *testing.T) {
	ctx := context.Background()
	png := testImage(t, "tiny.png")
	r := newRig(t)
	tk, token := r.ticket(t, "local", ask.ImagePNG)

	// Refusals that leave the ticket as it was.
	_, err := r.svc.Put(ctx, "local", token, "image/jpeg", int64(len(png)), bytes.NewReader(png))
	wantCode(t, err, ask.EUploadInvalid)
	_, err = r.svc.Put(ctx, "local", token, ask.ImagePNG, 5<<20, refuseReads{t})
	wantCode(t, err, ask.EUploadTooLarge)
	_, err = r.svc.Put(ctx, "local", token, ask.ImagePNG, 10, bytes.NewReader(make([]byte, 5<<20)))
	wantCode(t, err, ask.EUploadTooLarge)
	_, err = r.svc.Put(ctx, "local", token, ask.ImagePNG, -1, bytes.NewReader(make([]byte, 4<<20+1)))
	wantCode(t, err, ask.EUploadTooLarge)
	_, err = r.svc.Put(ctx, "local", token, ask.ImagePNG, 0, strings.NewReader(""))
	wantCode(t, err, ask.EUploadInvalid)
	_, err = r.svc.Put(ctx, "local", token, ask.ImagePNG, -1, bytes.NewReader(testImage(t, "drawing.svg")))
	wantCode(t, err, ask.EUploadInvalid)
	_, err = r.svc.Put(ctx, "other", token, ask.ImagePNG, -1, bytes.NewReader(png))
	wantCode(t, err, ask.EUploadNotFound)
	for _, bad := range []string{"", token[:len(token)-1], token + "A", "../" + token[3:], strings.ToUpper(token)} {
		_, err = r.svc.Put(ctx, "local", bad, ask.ImagePNG, -1, bytes.NewReader(png))
		wantCode(t, err, ask.EUploadNotFound)
	}
	for _, bad := range []string{"", ".", "..", "../local", "local/..", "lo\x00cal"} {
		_, err = r.svc.Put(ctx, bad, token, ask.ImagePNG, -1, bytes.NewReader(png))
		wantCode(t, err, ask.EUploadNotFound)
	}

	// Exactly maxBytes is fine: a PNG padded with bytes after its end.
	full := append(bytes.Clone(png), make([]byte, 4<<20-len(png))...)
	rec, err := r.svc.Put(ctx, "local", token, "image/png; charset=binary", -1, bytes.NewReader(full))
	if err != nil {
		t.Fatalf("a PNG of exactly maxBytes: %v", err)
	}
	if *rec != (upload.Receipt{UploadID: tk.UploadID, ContentType: ask.ImagePNG, Size: 4 << 20}) {
		t.Errorf("receipt %+v", rec)
	}
	_, err = r.svc.Put(ctx, "local", token, ask.ImagePNG, int64(len(png)), bytes.NewReader(png))
	wantCode(t, err, ask.EUploadGone)

	rc, u, err := r.svc.Open(ctx, "local", tk.UploadID)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, full) || u.ContentType != ask.ImagePNG || u.Size != 4<<20 {
		t.Errorf("read back %d bytes, %+v", len(got), u)
	}
	for _, space := range []string{"other", ""} {
		_, _, err = r.svc.Open(ctx, space, tk.UploadID)
		wantCode(t, err, ask.EUploadNotFound)
	}
	for _, id := range []string{"../" + tk.UploadID, tk.UploadID + ".meta", "up_x"} {
		_, _, err = r.svc.Open(ctx, "local", id)
		wantCode(t, err, ask.EUploadNotFound)
	}
}

func TestPutExpired(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	_, token := r.ticket(t, "local", ask.ImagePNG)
	r.advance(15 * time.Minute)
	_, err := r.svc.Put(ctx, "local", token, ask.ImagePNG, -1, refuseReads{t})
	wantCode(t, err, ask.EUploadGone)
}

// TestPutRace: of many PUTs racing on one ticket, exactly one stores its bytes.
func TestPutRace(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	bodies := [][]byte{testImage(t, "tiny.png"), append(testImage(t, "tiny.png"), "another"...)}
	for round := range 10 {
		tk, token := r.ticket(t, "local", ask.ImagePNG)
		const n = 6
		var wg sync.WaitGroup
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = r.svc.Put(ctx, "local", token, ask.ImagePNG, -1, bytes.NewReader(bodies[i%2]))
			}()
		}
		close(start)
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
			} else if ask.ErrorCode(err) != ask.EUploadGone {
				t.Fatalf("round %d: a losing PUT got %v", round, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d PUTs stored, want exactly 1", round, wins)
		}
		rc, u, err := r.svc.Open(ctx, "local", tk.UploadID)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(rc)
		rc.Close()
		if int64(len(got)) != u.Size {
			t.Fatalf("round %d: %d bytes stored, the record says %d", round, len(got), u.Size)
		}
	}
}

// failingBlobs fails every put: the ticket must be released, not spent.
type failingBlobs struct{ ask.Blobs }

func (failingBlobs) PutBlob(context.Context, ask.BlobKey, ask.BlobInfo, io.Reader) error {
	return errors.New("disk full")
}

func TestPutReleasesOnFailure(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	good := r.svc.Blobs
	_, token := r.ticket(t, "local", ask.ImagePNG)
	png := testImage(t, "tiny.png")
	r.svc.Blobs = failingBlobs{good}
	_, err := r.svc.Put(ctx, "local", token, ask.ImagePNG, -1, bytes.NewReader(png))
	if err == nil || ask.ErrorCode(err) != ask.EInternal {
		t.Fatalf("a failing blob store: %v, want an internal error", err)
	}
	r.svc.Blobs = good
	if _, err := r.svc.Put(ctx, "local", token, ask.ImagePNG, -1, bytes.NewReader(png)); err != nil {
		t.Fatalf("after a failed store, the ticket must work again: %v", err)
	}
}

// cutOff is a body whose connection drops after a few bytes.
type cutOff struct{ n int }

func (c *cutOff) Read(p []byte) (int, error) {
	if c.n <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := min(len(p), c.n)
	c.n -= n
	return n, nil
}

func TestPutCutOff(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	_, token := r.ticket(t, "local", ask.ImagePNG)
	_, err := r.svc.Put(ctx, "local", token, ask.ImagePNG, 1000, &cutOff{100})
	wantCode(t, err, ask.ERequestInvalid)
	if _, err := r.svc.Put(ctx, "local", token, ask.ImagePNG, -1, bytes.NewReader(testImage(t, "tiny.png"))); err != nil {
		t.Fatalf("after a cut-off body, the ticket must work again: %v", err)
	}
}

// TestIssueCap: one credential gets at most MaxPerWindow tickets an hour, refused with
// request.rate_limited and a message that says when to try again; another credential, and the
// next hour, are not held back by it.
func TestIssueCap(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.svc.MaxPerWindow = 3
	for range 3 {
		r.ticket(t, "local", ask.ImagePNG)
	}
	_, err := r.svc.Issue(ctx, "local", "cred_test", ask.ImagePNG, "http://127.0.0.1:9/")
	wantCode(t, err, ask.ETooMany)
	if msg := ask.ErrorMessage(err); !strings.Contains(msg, "3 upload addresses") || !strings.Contains(msg, "2026-05-01T13:00:00") {
		t.Errorf("the refusal says %q", msg)
	}
	if _, err := r.svc.Issue(ctx, "local", "cred_other", ask.ImagePNG, "http://127.0.0.1:9/"); err != nil {
		t.Fatalf("another credential: %v", err)
	}
	r.advance(time.Hour)
	if _, err := r.svc.Issue(ctx, "local", "cred_test", ask.ImagePNG, "http://127.0.0.1:9/"); err != nil {
		t.Fatalf("the next hour: %v", err)
	}
}

// TestReap: a day after their tickets expired, uploads no ask shows are deleted, bytes and
// record (a stored image never named, a ticket never used); an image an ask shows stays, and so
// does everything younger.
func TestReap(t *testing.T) {
	ctx := context.Background()
	png := testImage(t, "tiny.png")
	r := newRig(t)
	put := func() *upload.Ticket {
		tk, token := r.ticket(t, "local", ask.ImagePNG)
		if _, err := r.svc.Put(ctx, "local", token, ask.ImagePNG, -1, bytes.NewReader(png)); err != nil {
			t.Fatal(err)
		}
		return tk
	}
	unnamed, shown := put(), put()
	unused, _ := r.ticket(t, "local", ask.ImagePNG)
	if err := r.db.UseUpload(ctx, "local", shown.UploadID); err != nil {
		t.Fatal(err)
	}
	r.advance(ask.UploadTTL + time.Hour)
	young := put()

	if n, err := r.svc.Reap(ctx); n != 0 || err != nil {
		t.Fatalf("Reap within the grace = %d, %v", n, err)
	}
	r.advance(ask.UploadGrace - time.Hour)
	if n, err := r.svc.Reap(ctx); n != 2 || err != nil {
		t.Fatalf("Reap = %d, %v; want the unnamed image and the unused ticket", n, err)
	}
	for _, id := range []string{unnamed.UploadID, unused.UploadID} {
		if _, err := r.db.UploadByID(ctx, "local", id); ask.ErrorCode(err) != ask.EUploadNotFound {
			t.Errorf("%s after the reap: %v", id, err)
		}
		key, _ := ask.UploadBlobKey("local", id)
		if _, _, err := r.svc.Blobs.OpenBlob(ctx, key); !errors.Is(err, ask.ErrBlobNotFound) {
			t.Errorf("the bytes of %s after the reap: %v", id, err)
		}
	}
	for _, id := range []string{shown.UploadID, young.UploadID} {
		rc, _, err := r.svc.Open(ctx, "local", id)
		if err != nil {
			t.Fatalf("%s after the reap: %v", id, err)
		}
		rc.Close()
	}
	if n, err := r.svc.Reap(ctx); n != 0 || err != nil {
		t.Fatalf("Reap again = %d, %v", n, err)
	}
}
