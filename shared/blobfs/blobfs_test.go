package blobfs_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/ask/asktest"
	"github.com/loopback-hq/loopback/shared/blobfs"
)

func open(t *testing.T) *blobfs.Store {
	t.Helper()
	s, err := blobfs.New(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	asktest.TestBlobs(t, func(t *testing.T) ask.Blobs { return open(t) })
}

// TestSharedStore runs the suite on one folder for every test, as one S3 bucket would be.
func TestSharedStore(t *testing.T) {
	s := open(t)
	asktest.TestBlobs(t, func(*testing.T) ask.Blobs { return s })
}

// TestLayout: a blob is DIR/<space hash>/<upload id> holding exactly the bytes put, private to
// this user, with no temporary files left behind.
func TestLayout(t *testing.T) {
	s := open(t)
	id := ask.NewUploadID()
	key, err := ask.UploadBlobKey("local", id)
	if err != nil {
		t.Fatal(err)
	}
	body := "\x89PNG not really"
	if err := s.PutBlob(context.Background(), key, ask.BlobInfo{ContentType: ask.ImagePNG, Size: int64(len(body))}, strings.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Root(), key.Dir(), id)
	b, err := os.ReadFile(path)
	if err != nil || string(b) != body {
		t.Fatalf("the blob file holds %q, %v", b, err)
	}
	var files []string
	filepath.WalkDir(s.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(s.Root(), p)
		files = append(files, rel)
		if info, _ := d.Info(); info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is readable by others: %v", rel, info.Mode().Perm())
		}
		return nil
	})
	want := []string{".", key.Dir(), key.Dir() + "/" + id, key.Dir() + "/" + id + ".meta"}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("files %v, want %v", files, want)
	}
}

// TestOddKeysNeverReachTheDisk: the zero key is refused, and a failed put leaves nothing.
func TestOddKeysNeverReachTheDisk(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	if err := s.PutBlob(ctx, ask.BlobKey{}, ask.BlobInfo{Size: 1}, strings.NewReader("x")); err == nil {
		t.Fatal("the zero key was accepted")
	}
	key, _ := ask.UploadBlobKey("local", ask.NewUploadID())
	if err := s.PutBlob(ctx, key, ask.BlobInfo{Size: 3}, strings.NewReader("toolong")); err == nil {
		t.Fatal("a long body was accepted")
	}
	entries, err := os.ReadDir(filepath.Join(s.Root(), key.Dir()))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("a failed put left %d files", len(entries))
	}
	for _, bad := range []string{"../x", "up_../../etc", "", "UP_AAAAAAAAAAAAAAAAAAAAAAAAAA", "up_aaaaaaaaaaaaaaaaaaaaaaaaa/", "up_aaaaaaaaaaaaaaaaaaaaaaaaa1"} {
		if _, err := ask.UploadBlobKey("local", bad); err == nil {
			t.Errorf("UploadBlobKey(%q) made a key", bad)
		}
	}
}
