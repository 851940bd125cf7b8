package upload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"

	"golang.org/x/image/webp"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Limits on an image's dimensions. A few megabytes of PNG can declare a gigapixel of one colour,
// which would take gigabytes to draw in the person's browser; real screenshots, even of a whole
// long page, stay far below these.
const (
	MaxImageSide   = 32768
	MaxImagePixels = 40_000_000
)

// format is how one ImageType is recognised: its signature at the start of the bytes, then its
// decoder reading the header.
type format struct {
	name         string
	signature    func(b []byte) bool
	decodeConfig func(r io.Reader) (image.Config, error)
}

var formats = map[string]format{
	ask.ImagePNG: {"PNG", func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) },
		png.DecodeConfig},
	ask.ImageJPEG: {"JPEG", func(b []byte) bool { return bytes.HasPrefix(b, []byte("\xff\xd8\xff")) },
		jpeg.DecodeConfig},
	ask.ImageGIF: {"GIF", func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
	}, gif.DecodeConfig},
	ask.ImageWebP: {"WebP", func(b []byte) bool {
		return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP"
	}, webp.DecodeConfig},
}

// CheckImage says whether b is an image of contentType, one of ask.ImageTypes: its bytes start
// with the format's signature, the format's own decoder reads its header, and its dimensions are
// within MaxImageSide and MaxImagePixels. Anything else (an empty body, an SVG, HTML, another
// format, a header cut short) is an *ask.Error with EUploadInvalid that says what is wrong. It
// reads only b and never panics, whatever b holds.
func CheckImage(contentType string, b []byte) error {
	return CheckImageReader(contentType, bytes.NewReader(b))
}

// headPeek is how much of the bytes CheckImageReader looks at before the decoder: enough for
// every signature and for saying what the bytes look like instead.
const headPeek = 512

// CheckImageReader is CheckImage on bytes read from r, with memory that does not grow with their
// size: the first headPeek bytes for the signature, then the format's decoder reads the header as
// a stream, which for a JPEG may sit after megabytes of EXIF and ICC data (skipped, not kept). It
// reads no further than the header, and what it reads is all it needs: nothing after the header is
// checked (the decoder does not draw the pixels; the image is served with nosniff and a sandbox CSP
// as the type it was checked to be). A read error of r other than the bytes ending is returned as
// it is (not an *ask.Error): the bytes could not be read, which says nothing about them.
func CheckImageReader(contentType string, r io.Reader) error {
	f, ok := formats[contentType]
	if !ok {
		return ask.Errorf(ask.EUploadInvalid, "%q is not an image type Loopback takes: use one of %s", contentType, strings.Join(ask.ImageTypes, ", "))
	}
	rd := &readErr{r: r}
	br := bufio.NewReaderSize(rd, 4096)
	head, _ := br.Peek(headPeek)
	if rd.err != nil {
		return rd.err
	}
	if len(head) == 0 {
		return ask.Errorf(ask.EUploadInvalid, "the body is empty: send the image's bytes")
	}
	if !f.signature(head) {
		return ask.Errorf(ask.EUploadInvalid, "the body is not a %s image: it does not start with the %s signature%s", f.name, f.name, looksLike(head))
	}
	cfg, err := f.decodeConfig(br)
	if rd.err != nil {
		return rd.err
	}
	if err != nil {
		return ask.Errorf(ask.EUploadInvalid, "the body is not a valid %s image: %v", f.name, err)
	}
	if cfg.Width < 1 || cfg.Height < 1 {
		return ask.Errorf(ask.EUploadInvalid, "the %s image is %d×%d pixels: it has no pixels to show", f.name, cfg.Width, cfg.Height)
	}
	if cfg.Width > MaxImageSide || cfg.Height > MaxImageSide || int64(cfg.Width)*int64(cfg.Height) > MaxImagePixels {
		return ask.Errorf(ask.EUploadInvalid, "the %s image is %d×%d pixels: at most %d on a side and %d in all are allowed; scale it down",
			f.name, cfg.Width, cfg.Height, MaxImageSide, MaxImagePixels)
	}
	return nil
}

// readErr remembers the first error of r other than io.EOF: a connection cut while the check
// reads is not a verdict on the bytes.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && e.err == nil {
		e.err = err
	}
	return n, err
}

// looksLike names what the bytes seem to be instead, to help whoever sent them.
func looksLike(b []byte) string {
	for ct, f := range formats {
		if f.signature(b) {
			return fmt.Sprintf(" (it looks like %s: ask for an upload of that type)", ct)
		}
	}
	head := strings.ToLower(strings.TrimSpace(string(b[:min(len(b), 256)])))
	switch {
	case strings.HasPrefix(head, "<svg"), strings.HasPrefix(head, "<?xml") && strings.Contains(head, "<svg"):
		return " (it looks like SVG, which is not accepted: convert it to PNG)"
	case strings.HasPrefix(head, "<"):
		return " (it looks like HTML or XML)"
	}
	return ""
}
