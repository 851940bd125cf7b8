package ask

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Line comments (contract revision 7): a person's approval or request for changes on a review may
// comment on lines of the review's diff, each at its file and line. The one rule that matters is
// checked here, once, for every surface: each comment is at a line the review's diff shows, so the
// agent can find it. The diff is read as the inbox reads it (web/src/diff.ts, parse-diff): the same
// file names and the same line numbers.

// LineSide is which side of a diff a line comment is on.
type LineSide string

const (
	SideNew LineSide = "new" // a line of the file as changed: an added or unchanged line, by its new number
	SideOld LineSide = "old" // a line of the file before: a removed line (or an unchanged one), by its old number
)

// Bounds of line comments, from the contract.
const (
	MaxLineComments     = 100
	MaxLineCommentRunes = 2000
	MaxLineCommentPath  = 1000
)

// LineComment is a person's comment on one line of a review's diff.
type LineComment struct {
	Path string   `json:"path"`
	Line int      `json:"line"`
	Side LineSide `json:"side"`
	Text string   `json:"text"`
}

// Where says where the comment is, as a model reads it: `path:line`, and for a line of the old
// file, that it is the old file's line (a removed line).
func (c LineComment) Where() string {
	if c.Side == SideOld {
		return fmt.Sprintf("%s:%d (old file, a removed line)", c.Path, c.Line)
	}
	return fmt.Sprintf("%s:%d", c.Path, c.Line)
}

// DiffLineKind is what a line of a diff's hunk is.
type DiffLineKind byte

const (
	LineContext DiffLineKind = ' '
	LineAdded   DiffLineKind = '+'
	LineRemoved DiffLineKind = '-'
)

// DiffLine is one line of a hunk with its numbers: Old is 0 on an added line, New on a removed one.
type DiffLine struct {
	Kind     DiffLineKind
	Old, New int
}

// DiffFile is one file of a unified diff: its names as the diff gives them ("" for /dev/null or
// not given) and the lines of its hunks.
type DiffFile struct {
	From, To string
	Lines    []DiffLine
}

// Name is the file as a line comment names it: the new path, else the old one (a deleted file).
func (f DiffFile) Name() string {
	if f.To != "" {
		return f.To
	}
	return f.From
}

var (
	hunkHeader    = regexp.MustCompile(`^@@\s+-(\d+),?(\d+)?\s+\+(\d+),?(\d+)?\s@@`)
	gitPrefix     = regexp.MustCompile(`^(a|b|i|w|c|o|1|2)/`)
	gitOldName    = regexp.MustCompile(`[aiwco12]/`)
	gitNewName    = regexp.MustCompile(`["']? ["']?[biwco12]/`)
	fileTimestamp = regexp.MustCompile(`\t.*|\d{4}-\d\d-\d\d\s\d\d:\d\d:\d\d(.\d+)?\s(\+|-)\d\d\d\d`)
	quotedName    = regexp.MustCompile(`^\\?['"]|\\?['"]$`)
)

const devNull = "/dev/null"

// ParseDiff reads a unified diff (as `git diff` prints it) into its files, as the inbox's
// parse-diff does: file names from `diff --git`, `---` and `+++` lines with their `a/`, `b/`
// prefixes left off, and each hunk's lines numbered from its `@@ -a,b +c,d @@` header and counted
// by it. fallback names a file the diff does not (a diff of hunks only). Anything it does not
// understand it skips; it never fails.
func ParseDiff(diff, fallback string) []DiffFile {
	diff = strings.TrimSuffix(strings.ReplaceAll(diff, "\r\n", "\n"), "\n")
	if strings.TrimSpace(diff) == "" {
		return nil
	}
	var (
		files            []*DiffFile
		cur              *DiffFile
		hunks            int // of cur
		inHunk           bool
		oldLeft, newLeft int
		oldNo, newNo     int
	)
	newFile := func(names []string) {
		cur = &DiffFile{}
		hunks = 0
		if len(names) > 0 {
			cur.From = names[0]
		}
		if len(names) > 1 {
			cur.To = names[1]
		}
		files = append(files, cur)
	}
	startFile := func() { // a header line: a new file unless the current one has no hunk yet
		if cur == nil || hunks > 0 {
			newFile(nil)
		}
	}
	for _, line := range strings.Split(diff, "\n") {
		if inHunk {
			switch {
			case line == `\ No newline at end of file`:
			case strings.HasPrefix(line, "-"):
				cur.Lines = append(cur.Lines, DiffLine{Kind: LineRemoved, Old: oldNo})
				oldNo++
				oldLeft--
			case strings.HasPrefix(line, "+"):
				cur.Lines = append(cur.Lines, DiffLine{Kind: LineAdded, New: newNo})
				newNo++
				newLeft--
			default:
				cur.Lines = append(cur.Lines, DiffLine{Kind: LineContext, Old: oldNo, New: newNo})
				oldNo++
				newNo++
				oldLeft--
				newLeft--
			}
			if oldLeft == 0 && newLeft == 0 {
				inHunk = false
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "diff ") || strings.HasPrefix(line, "diff\t"):
			newFile(gitNames(line))
		case strings.HasPrefix(line, "new file mode "):
			startFile()
			cur.From = ""
		case strings.HasPrefix(line, "deleted file mode "):
			startFile()
			cur.To = ""
		case strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "---\t"):
			startFile()
			cur.From = oldOrNewName(line)
		case strings.HasPrefix(line, "+++ ") || strings.HasPrefix(line, "+++\t"):
			startFile()
			cur.To = oldOrNewName(line)
		default:
			m := hunkHeader.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			if cur == nil {
				newFile(nil)
			}
			oldNo, newNo = atoi(m[1]), atoi(m[3])
			oldLeft, newLeft = count(m[2]), count(m[4])
			hunks++
			inHunk = !(oldLeft == 0 && newLeft == 0)
		}
	}
	out := make([]DiffFile, 0, len(files))
	for _, f := range files {
		if f.From == devNull {
			f.From = ""
		}
		if f.To == devNull {
			f.To = ""
		}
		if f.From == "" && f.To == "" {
			f.To = fallback
		}
		if len(f.Lines) == 0 && f.Name() == "" {
			continue
		}
		out = append(out, *f)
	}
	return out
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

// count is a hunk header's line count: left out, it is 1.
func count(s string) int {
	if s == "" {
		return 1
	}
	return atoi(s)
}

// gitNames reads the two names of a `diff --git a/x b/y` line: the old name runs from the first
// `a/` to the last ` b/`, the new one from there to the end (as parse-diff reads them).
func gitNames(line string) []string {
	first := gitOldName.FindStringIndex(line)
	if first == nil {
		return nil
	}
	rest := line[first[1]:]
	seps := gitNewName.FindAllStringIndex(rest, -1)
	if len(seps) == 0 {
		return nil
	}
	last := seps[len(seps)-1]
	return []string{strings.Trim(rest[:last[0]], `"'`), strings.Trim(rest[last[1]:], `"'`)}
}

// oldOrNewName reads the name of a `--- a/x` or `+++ b/y` line.
func oldOrNewName(line string) string {
	s := strings.TrimSpace(strings.TrimLeft(line, "-+"))
	if loc := fileTimestamp.FindStringIndex(s); loc != nil {
		s = strings.TrimSpace(s[:loc[0]])
	}
	s = quotedName.ReplaceAllString(s, "")
	return gitPrefix.ReplaceAllString(s, "")
}

// reviewDiffs are the files of every diff block of a review's content.
func reviewDiffs(p *ReviewPrompt) []DiffFile {
	if p == nil {
		return nil
	}
	var out []DiffFile
	for _, b := range p.Content {
		if b.Type == "diff" {
			out = append(out, ParseDiff(b.Diff, b.Filename)...)
		}
	}
	return out
}

// CheckLineComments holds a reply's line comments to the contract's bounds and to the review's
// diff: each names a file of the diff and a line that the diff shows on its side. The error says
// which comment and what to do, for the person or the model that reads it.
func CheckLineComments(p *ReviewPrompt, comments []LineComment) error {
	if len(comments) == 0 {
		return nil
	}
	if len(comments) > MaxLineComments {
		return Errorf(EReplyInvalid, "comments: %d line comments; at most %d are allowed on one reply", len(comments), MaxLineComments)
	}
	files := reviewDiffs(p)
	if len(files) == 0 {
		return Errorf(EReplyInvalid, "comments: this review shows no diff, so it takes no line comments; put what you have to say in the reply's text")
	}
	seen := map[LineComment]bool{}
	for i, c := range comments {
		at := fmt.Sprintf("comments[%d]", i)
		switch {
		case c.Path == "":
			return Errorf(EReplyInvalid, "%s.path must name a file of the review's diff", at)
		case utf8.RuneCountInString(c.Path) > MaxLineCommentPath:
			return Errorf(EReplyInvalid, "%s.path is %d characters; at most %d are allowed", at, utf8.RuneCountInString(c.Path), MaxLineCommentPath)
		case c.Line < 1:
			return Errorf(EReplyInvalid, "%s.line must be a line number, 1 or more (got %d)", at, c.Line)
		case c.Side != SideNew && c.Side != SideOld:
			return Errorf(EReplyInvalid, "%s.side must be new (a line of the file as changed) or old (a removed line), not %q", at, c.Side)
		case Blank(c.Text):
			return Errorf(EReplyInvalid, "%s.text must not be empty: say something about %s, or leave the comment out", at, c.Where())
		case utf8.RuneCountInString(c.Text) > MaxLineCommentRunes:
			return Errorf(EReplyInvalid, "%s.text is %d characters; at most %d are allowed", at, utf8.RuneCountInString(c.Text), MaxLineCommentRunes)
		}
		if i := strings.IndexFunc(c.Text, BidiControl); i >= 0 {
			r, _ := utf8.DecodeRuneInString(c.Text[i:])
			return Errorf(EReplyInvalid, "%s.text holds the bidirectional control %U at byte %d, which would show the text in another order than it is written; remove it", at, r, i)
		}
		var named []DiffFile
		for _, f := range files {
			if f.To == c.Path || f.From == c.Path {
				named = append(named, f)
			}
		}
		if len(named) == 0 {
			return Errorf(EReplyInvalid, "%s.path: %q is not a file of the review's diff; its files are %s", at, c.Path, fileList(files))
		}
		if !showsLine(named, c.Line, c.Side) {
			return Errorf(EReplyInvalid, "%s: the diff does not show line %d of %s's %s file; comment on a line the diff shows (%s)",
				at, c.Line, c.Path, sideWord(c.Side), lineRanges(named, c.Side))
		}
		if seen[c] {
			return Errorf(EReplyInvalid, "%s repeats an earlier comment at %s word for word; leave one out", at, c.Where())
		}
		seen[c] = true
	}
	return nil
}

func sideWord(s LineSide) string {
	if s == SideOld {
		return "old"
	}
	return "new"
}

func showsLine(files []DiffFile, line int, side LineSide) bool {
	for _, f := range files {
		for _, l := range f.Lines {
			if side == SideNew && l.Kind != LineRemoved && l.New == line {
				return true
			}
			if side == SideOld && l.Kind != LineAdded && l.Old == line {
				return true
			}
		}
	}
	return false
}

// fileList names a diff's files for an error, the first few.
func fileList(files []DiffFile) string {
	var names []string
	seen := map[string]bool{}
	for _, f := range files {
		if n := f.Name(); n != "" && !seen[n] {
			seen[n] = true
			names = append(names, strconv.Quote(n))
		}
	}
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}

// lineRanges says which lines of a file a diff shows on a side: "new lines 10-14, 40-52".
func lineRanges(files []DiffFile, side LineSide) string {
	var ranges []string
	start, prev := 0, 0
	flush := func() {
		if start == 0 {
			return
		}
		if start == prev {
			ranges = append(ranges, strconv.Itoa(start))
		} else {
			ranges = append(ranges, fmt.Sprintf("%d-%d", start, prev))
		}
	}
	for _, f := range files {
		for _, l := range f.Lines {
			n := l.New
			if side == SideOld {
				n = l.Old
			}
			if n == 0 || (side == SideNew && l.Kind == LineRemoved) || (side == SideOld && l.Kind == LineAdded) {
				continue
			}
			if start != 0 && n == prev+1 {
				prev = n
				continue
			}
			flush()
			start, prev = n, n
		}
	}
	flush()
	if len(ranges) == 0 {
		return fmt.Sprintf("it shows no %s lines of this file", sideWord(side))
	}
	if len(ranges) > 12 {
		ranges = append(ranges[:12], "…")
	}
	return sideWord(side) + " lines " + strings.Join(ranges, ", ")
}

// commentCount says how many line comments a reply has, for a one-line description of it.
func commentCount(cs []LineComment) string {
	switch len(cs) {
	case 0:
		return ""
	case 1:
		return ", with a comment on one line"
	}
	return fmt.Sprintf(", with comments on %d lines", len(cs))
}
