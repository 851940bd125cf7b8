package ask

// Block types: what can be shown to the person.
const (
	BlockMarkdown = "markdown"
	BlockCode     = "code"
	BlockDiff     = "diff"
	BlockImage    = "image"
)

// Block is one piece of what is shown to the person. Type decides which fields belong: markdown has
// Text; code has Code, Language, Filename; diff has Diff, Filename; image has UploadID, Caption.
// Decoding refuses a field that does not belong to the block's type.
type Block struct {
	Type     string
	Text     string
	Code     string
	Language string
	Filename string
	Diff     string
	UploadID string
	Caption  string
}

// blockFields lists, per block type, the fields it may carry and which of them are required.
var blockFields = map[string]struct{ allowed, required []string }{
	BlockMarkdown: {[]string{"type", "text"}, []string{"text"}},
	BlockCode:     {[]string{"type", "code", "language", "filename"}, []string{"code"}},
	BlockDiff:     {[]string{"type", "diff", "filename"}, []string{"diff"}},
	BlockImage:    {[]string{"type", "uploadId", "caption"}, []string{"uploadId"}},
}

// validate checks the block's required fields; path names it in the message, such as
// `content[2]`.
func (b *Block) validate(path string) *Error {
	switch b.Type {
	case BlockMarkdown:
		if Blank(b.Text) {
			return Errorf(EInputInvalid, "%s.text: a markdown block needs text", path)
		}
	case BlockCode:
		if Blank(b.Code) {
			return Errorf(EInputInvalid, "%s.code: a code block needs code", path)
		}
	case BlockDiff:
		if Blank(b.Diff) {
			return Errorf(EInputInvalid, "%s.diff: a diff block needs a diff", path)
		}
	case BlockImage:
		if Blank(b.UploadID) {
			return Errorf(EInputInvalid, "%s.uploadId: an image block needs the uploadId of an upload", path)
		}
	default:
		return Errorf(EInputInvalid, "%s.type: must be one of markdown, code, diff, image (got %q)", path, b.Type)
	}
	return nil
}

// UploadIDs lists the uploads that blocks show, in order, so callers can check they exist.
func UploadIDs(blocks []Block) []string {
	var ids []string
	for _, b := range blocks {
		if b.Type == BlockImage {
			ids = append(ids, b.UploadID)
		}
	}
	return ids
}
