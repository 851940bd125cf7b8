// Package blobfs keeps blobs (the bytes of uploads) as files in a folder: ask.Blobs for the local
// binary. A blob is DIR/<space hash>/<upload id>, its bytes as they were uploaded, beside
// <upload id>.meta, which holds its content type and size. Both names come from an ask.BlobKey,
// which only Loopback makes, and are checked again here against their strict patterns: no text
// from a request ever becomes a path.
//
// A put writes each file to a temporary file in the same folder, syncs it, and renames it into
// place (the metadata first, then the bytes), so a reader finds a whole blob or none. The renames
// of one put and the reads of one open are serialised within the process, so even replacing a
// blob never shows new metadata with old bytes.
package blobfs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Store is ask.Blobs on a folder.
type Store struct {
	root string
	mu   sync.RWMutex // Put's renames against Open's reads
}

var _ ask.Blobs = (*Store)(nil)

// New returns a Store on root, creating the folder (readable only by this user) if need be.
func New(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("blobfs: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("blobfs: creating %s: %w", abs, err)
	}
	return &Store{root: abs}, nil
}

// Root is the folder the blobs are in.
func (s *Store) Root() string { return s.root }

// meta is what <upload id>.meta holds.
type meta struct {
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
}

// paths returns the folder of a key and its two files, after checking the key's parts again.
func (s *Store) paths(key ask.BlobKey) (dir, data, metaPath string, err error) {
	if key.IsZero() || !isHexDir(key.Dir()) || !ask.ValidUploadID(key.Name()) {
		return "", "", "", fmt.Errorf("blobfs: %q is not a valid blob key", key.String())
	}
	dir = filepath.Join(s.root, key.Dir())
	data = filepath.Join(dir, key.Name())
	// Belt and braces: the patterns above admit no separator or dot segment, so this holds.
	if filepath.Dir(data) != dir || filepath.Dir(dir) != s.root {
		return "", "", "", fmt.Errorf("blobfs: key %q leaves the blob folder", key.String())
	}
	return dir, data, data + ".meta", nil
}

// isHexDir reports whether d is 32 lower-case hex digits, as ask.BlobKey.Dir makes it.
func isHexDir(d string) bool {
	if len(d) != 32 {
		return false
	}
	for _, c := range []byte(d) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// PutBlob implements ask.Blobs.
func (s *Store) PutBlob(ctx context.Context, key ask.BlobKey, info ask.BlobInfo, body io.Reader) error {
	dir, data, metaPath, err := s.paths(key)
	if err != nil {
		return err
	}
	if info.Size < 0 {
		return fmt.Errorf("blobfs: put %s: negative size %d", key, info.Size)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("blobfs: put %s: %w", key, err)
	}
	tmpData, err := writeTemp(ctx, dir, io.LimitReader(body, info.Size+1), info.Size)
	if err != nil {
		return fmt.Errorf("blobfs: put %s: %w", key, err)
	}
	defer os.Remove(tmpData) // gone after the rename; removes it on every failure
	m, _ := json.Marshal(meta{ContentType: info.ContentType, Size: info.Size})
	tmpMeta, err := writeTemp(ctx, dir, bytes.NewReader(m), int64(len(m)))
	if err != nil {
		return fmt.Errorf("blobfs: put %s: %w", key, err)
	}
	defer os.Remove(tmpMeta)

	s.mu.Lock()
	err = os.Rename(tmpMeta, metaPath)
	if err == nil {
		err = os.Rename(tmpData, data)
	}
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("blobfs: put %s: %w", key, err)
	}
	return syncDir(dir)
}

// writeTemp writes exactly size bytes from r to a new temporary file in dir, synced and closed,
// and returns its path. Fewer or more bytes than size is an error, and leaves no file.
func writeTemp(ctx context.Context, dir string, r io.Reader, size int64) (path string, err error) {
	f, err := os.CreateTemp(dir, ".put-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	n, err := io.Copy(f, r)
	if err != nil {
		return "", err
	}
	if n != size {
		return "", fmt.Errorf("the body held %s bytes, not the %d declared", countWord(n, size), size)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return f.Name(), nil
}

// countWord says how many bytes a body held, where a limited read stopped one past size.
func countWord(n, size int64) string {
	if n > size {
		return "more than"
	}
	return fmt.Sprint(n)
}

// OpenBlob implements ask.Blobs.
func (s *Store) OpenBlob(ctx context.Context, key ask.BlobKey) (io.ReadCloser, ask.BlobInfo, error) {
	_, data, metaPath, err := s.paths(key)
	if err != nil {
		return nil, ask.BlobInfo{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	f, err := os.Open(data)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ask.BlobInfo{}, fmt.Errorf("blobfs: open %s: %w", key, ask.ErrBlobNotFound)
	} else if err != nil {
		return nil, ask.BlobInfo{}, fmt.Errorf("blobfs: open %s: %w", key, err)
	}
	info, err := readMeta(f, metaPath)
	if err != nil {
		f.Close()
		return nil, ask.BlobInfo{}, fmt.Errorf("blobfs: open %s: %w", key, err)
	}
	return f, info, nil
}

// DeleteBlob implements ask.Blobs: the bytes first, then the metadata (a reader that finds the
// data finds its metadata), then the folder is synced. No blob under key is no error.
func (s *Store) DeleteBlob(ctx context.Context, key ask.BlobKey) error {
	dir, data, metaPath, err := s.paths(key)
	if err != nil {
		return err
	}
	s.mu.Lock()
	err = os.Remove(data)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		err = os.Remove(metaPath)
	}
	s.mu.Unlock()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blobfs: delete %s: %w", key, err)
	}
	if err := syncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blobfs: delete %s: %w", key, err)
	}
	return nil
}

// readMeta reads a blob's metadata and checks it against the open data file.
func readMeta(f *os.File, metaPath string) (ask.BlobInfo, error) {
	b, err := os.ReadFile(metaPath)
	if err != nil {
		return ask.BlobInfo{}, err
	}
	var m meta
	if err := json.Unmarshal(b, &m); err != nil {
		return ask.BlobInfo{}, fmt.Errorf("metadata: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		return ask.BlobInfo{}, err
	}
	if !st.Mode().IsRegular() || st.Size() != m.Size {
		return ask.BlobInfo{}, fmt.Errorf("the file is %d bytes, its metadata says %d", st.Size(), m.Size)
	}
	return ask.BlobInfo{ContentType: m.ContentType, Size: m.Size}, nil
}

// syncDir makes the renames in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
