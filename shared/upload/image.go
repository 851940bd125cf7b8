package upload

import (
	"bytes"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
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
	decodeConfig func(b []byte) (image.Config, error)
}

var formats = map[string]format{
	ask.ImagePNG: {"PNG", func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) },
		func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) }},
	ask.ImageJPEG: {"JPEG", func(b []byte) bool { return bytes.HasPrefix(b, []byte("\xff\xd8\xff")) },
		func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) }},
	ask.ImageGIF: {"GIF", func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
	}, func(b []byte) (image.Config, error) { return gif.DecodeConfig(bytes.NewReader(b)) }},
	ask.ImageWebP: {"WebP", func(b []byte) bool {
		return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP"
	}, func(b []byte) (image.Config, error) { return webp.DecodeConfig(bytes.NewReader(b)) }},
}

// CheckImage says whether b is an image of contentType, one of ask.ImageTypes: its bytes start
// with the format's signature, the format's own decoder reads its header, and its dimensions are
// within MaxImageSide and MaxImagePixels. Anything else (an empty body, an SVG, HTML, another
// format, a header cut short) is an *ask.Error with EUploadInvalid that says what is wrong. It
// reads only b and never panics, whatever b holds.
func CheckImage(contentType string, b []byte) error {
	f, ok := formats[contentType]
	if !ok {
		return ask.Errorf(ask.EUploadInvalid, "%q is not an image type Loopback takes: use one of %s", contentType, strings.Join(ask.ImageTypes, ", "))
	}
	if len(b) == 0 {
		return ask.Errorf(ask.EUploadInvalid, "the body is empty: send the image's bytes")
	}
	if !f.signature(b) {
		return ask.Errorf(ask.EUploadInvalid, "the body is not a %s image: it does not start with the %s signature%s", f.name, f.name, looksLike(b))
	}
	cfg, err := f.decodeConfig(b)
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
