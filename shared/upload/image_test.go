package upload_test

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/upload"
)

// testImage reads one of testdata/images.
func testImage(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "images", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var realImages = map[string]string{
	ask.ImagePNG:  "tiny.png",
	ask.ImageJPEG: "tiny.jpg",
	ask.ImageGIF:  "tiny.gif",
	ask.ImageWebP: "tiny.webp",
}

func wantInvalid(t *testing.T, err error, mentions ...string) {
	t.Helper()
	var e *ask.Error
	if !errors.As(err, &e) || e.Code != ask.EUploadInvalid {
		t.Fatalf("got %v, want an *ask.Error with %s", err, ask.EUploadInvalid)
	}
	for _, m := range mentions {
		if !strings.Contains(e.Message, m) {
			t.Errorf("message %q does not mention %q", e.Message, m)
		}
	}
}

func TestCheckImageAcceptsRealImages(t *testing.T) {
	for ct, name := range realImages {
		if err := upload.CheckImage(ct, testImage(t, name)); err != nil {
			t.Errorf("%s (%s): %v", name, ct, err)
		}
	}
}

func TestCheckImageRefuses(t *testing.T) {
	png := testImage(t, "tiny.png")
	for _, tc := range []struct {
		name, contentType string
		body              []byte
		mentions          []string
	}{
		{"an empty body", ask.ImagePNG, nil, []string{"empty"}},
		{"SVG labelled PNG", ask.ImagePNG, testImage(t, "drawing.svg"), []string{"not a PNG", "SVG"}},
		{"HTML labelled PNG", ask.ImagePNG, testImage(t, "page.html"), []string{"not a PNG", "HTML"}},
		{"HTML labelled GIF", ask.ImageGIF, testImage(t, "page.html"), []string{"not a GIF"}},
		{"PNG labelled JPEG", ask.ImageJPEG, png, []string{"not a JPEG", "image/png"}},
		{"JPEG labelled WebP", ask.ImageWebP, testImage(t, "tiny.jpg"), []string{"not a WebP", "image/jpeg"}},
		{"WebP labelled GIF", ask.ImageGIF, testImage(t, "tiny.webp"), []string{"image/webp"}},
		{"the PNG signature, then HTML", ask.ImagePNG, append([]byte("\x89PNG\r\n\x1a\n"), testImage(t, "page.html")...), []string{"not a valid PNG"}},
		{"a PNG cut short", ask.ImagePNG, png[:20], []string{"not a valid PNG"}},
		{"a WebP header only", ask.ImageWebP, []byte("RIFF\x00\x00\x00\x00WEBP"), []string{"not a valid WebP"}},
		{"SVG as its own type", "image/svg+xml", testImage(t, "drawing.svg"), []string{"image/png"}},
		{"a GIF of 65535×65535", ask.ImageGIF, []byte("GIF89a\xff\xff\xff\xff\x00\x00\x00;"), []string{"65535×65535", "scale it down"}},
		{"a PNG of 0×0", ask.ImagePNG, pngOf(t, 0, 0), nil},
		{"a PNG of 40001×1000", ask.ImagePNG, pngHeader(t, 40001, 1000), []string{"40001×1000"}},
		{"a PNG of 10000×5000", ask.ImagePNG, pngHeader(t, 10000, 5000), []string{"10000×5000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantInvalid(t, upload.CheckImage(tc.contentType, tc.body), tc.mentions...)
		})
	}
}

// pngOf encodes a real PNG of w×h.
func pngOf(t *testing.T, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		return []byte("\x89PNG\r\n\x1a\n")
	}
	return b.Bytes()
}

// pngHeader is a PNG's signature and IHDR for w×h: all DecodeConfig reads.
func pngHeader(t *testing.T, w, h int) []byte {
	small := pngOf(t, 1, 1)
	b := bytes.Clone(small[:33])
	b[16], b[17], b[18], b[19] = byte(w>>24), byte(w>>16), byte(w>>8), byte(w)
	b[20], b[21], b[22], b[23] = byte(h>>24), byte(h>>16), byte(h>>8), byte(h)
	// Fix the chunk's CRC, or the decoder refuses it for that alone.
	crc := crc32.ChecksumIEEE(b[12:29])
	b[29], b[30], b[31], b[32] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	if _, err := png.DecodeConfig(bytes.NewReader(b)); err != nil {
		t.Fatalf("the test's PNG header of %d×%d: %v", w, h, err)
	}
	return b
}

// FuzzCheckImage: whatever the bytes and the type, CheckImage never panics; it refuses with
// upload.invalid, or it accepts bytes that start with the type's signature and that the standard
// decoders (registered by format) read as that very format, within the size limits.
func FuzzCheckImage(f *testing.F) {
	for ct, name := range realImages {
		f.Add(ct, testImage(f, name))
	}
	f.Add(ask.ImagePNG, testImage(f, "drawing.svg"))
	f.Fuzz(func(t *testing.T, contentType string, b []byte) {
		err := upload.CheckImage(contentType, b)
		// The stream the checker reads on AWS comes in pieces: one byte at a time, the same verdict.
		if serr := upload.CheckImageReader(contentType, iotest.OneByteReader(bytes.NewReader(b))); fmt.Sprint(serr) != fmt.Sprint(err) {
			t.Fatalf("read a byte at a time: %v; all at once: %v", serr, err)
		}
		if err != nil {
			var e *ask.Error
			if !errors.As(err, &e) || e.Code != ask.EUploadInvalid || e.Message == "" {
				t.Fatalf("refused with %v (%T), want an upload.invalid *ask.Error", err, err)
			}
			return
		}
		if !ask.IsImageType(contentType) {
			t.Fatalf("accepted type %q", contentType)
		}
		cfg, format, derr := image.DecodeConfig(bytes.NewReader(b))
		if derr != nil {
			t.Fatalf("accepted as %s, but image.DecodeConfig says %v", contentType, derr)
		}
		if "image/"+format != contentType {
			t.Fatalf("accepted as %s, but image.DecodeConfig reads %s", contentType, format)
		}
		if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > upload.MaxImageSide || cfg.Height > upload.MaxImageSide ||
			int64(cfg.Width)*int64(cfg.Height) > upload.MaxImagePixels {
			t.Fatalf("accepted %d×%d", cfg.Width, cfg.Height)
		}
		if head := strings.ToLower(string(b[:min(len(b), 5)])); head == "<svg " || head == "<!doc" || head == "<html" {
			t.Fatalf("accepted markup as %s", contentType)
		}
	})
}

// A read that fails while the check reads is no verdict on the bytes: the error comes back as
// it is, not as upload.invalid, so the checker retries rather than refusing a good image.
func TestCheckImageReaderReadError(t *testing.T) {
	b := testImage(t, "tiny.jpg")
	cut := errors.New("connection reset")
	err := upload.CheckImageReader(ask.ImageJPEG, io.MultiReader(bytes.NewReader(b[:len(b)/2]), errReader{cut}))
	if !errors.Is(err, cut) {
		t.Fatalf("got %v, want the read error", err)
	}
	if err := upload.CheckImageReader(ask.ImageJPEG, bytes.NewReader(b)); err != nil {
		t.Fatalf("the whole JPEG: %v", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// bigJPEGReader streams a valid JPEG whose header sits after about mib MiB of APP15 segments (as a
// camera's EXIF and ICC data can push a real JPEG's dimensions megabytes in), without holding it.
func bigJPEGReader(tb testing.TB, mib int) io.Reader {
	small := testImage(tb, "tiny.jpg")
	seg := make([]byte, 2+2+65533)
	seg[0], seg[1], seg[2], seg[3] = 0xFF, 0xEF, 0xFF, 0xFF
	parts := []io.Reader{bytes.NewReader(small[:2])}
	for range mib * 16 {
		parts = append(parts, bytes.NewReader(seg))
	}
	return io.MultiReader(append(parts, bytes.NewReader(small[2:]))...)
}

// BenchmarkCheckImageReader64MiB: checking a 64 MiB JPEG whose header is at its end, as the
// checker streams an S3 object. Run with -benchmem: B/op is what one check allocates.
func BenchmarkCheckImageReader64MiB(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		r := bigJPEGReader(b, 64)
		b.StartTimer()
		if err := upload.CheckImageReader(ask.ImageJPEG, r); err != nil {
			b.Fatal(err)
		}
	}
}
