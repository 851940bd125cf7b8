package ask_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
)

// twoFiles is a git diff of two files: a change in the middle of src/retry.go (new lines 10-15,
// old lines 10-14, old line 12 removed, new lines 12-13 added) and a new file docs/retry.md.
const twoFiles = `diff --git a/src/retry.go b/src/retry.go
index 3b18e51..a9c4f2d 100644
--- a/src/retry.go
+++ b/src/retry.go
@@ -10,5 +10,6 @@ func deliver(ctx context.Context) error {
 	for i := 0; i < 3; i++ {
 		err := send(ctx)
-		if err == nil {
+		if err == nil || !retryable(err) {
+			return err
 		}
 	}
diff --git a/docs/retry.md b/docs/retry.md
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/docs/retry.md
@@ -0,0 +1,2 @@
+# Retries
+A 5xx is retried twice.
`

// deletedFile is a diff that deletes old/legacy.go (old lines 1-3).
const deletedFile = `diff --git a/old/legacy.go b/old/legacy.go
deleted file mode 100644
index e69de29..0000000
--- a/old/legacy.go
+++ /dev/null
@@ -1,3 +0,0 @@
-package old
-
-func Legacy() {}
`

// hunksOnly is a diff without file headers, named by its block's filename.
const hunksOnly = `@@ -1,2 +1,2 @@
-a
+b
 c
`

func diffReview(t testing.TB, blocks ...ask.Block) *ask.Ask {
	t.Helper()
	in := reviewInput()
	in.Content = append(in.Content, blocks...)
	return mustReview(t, in, newClock())
}

func diffBlock(diff, filename string) ask.Block {
	return ask.Block{Type: ask.BlockDiff, Diff: diff, Filename: filename}
}

func comment(path string, line int, side ask.LineSide, text string) ask.LineComment {
	return ask.LineComment{Path: path, Line: line, Side: side, Text: text}
}

func TestParseDiff(t *testing.T) {
	files := ask.ParseDiff(twoFiles, "")
	if len(files) != 2 {
		t.Fatalf("got %d files, want 2: %+v", len(files), files)
	}
	if f := files[0]; f.From != "src/retry.go" || f.To != "src/retry.go" || len(f.Lines) != 7 {
		t.Errorf("first file: %+v", f)
	}
	want := []ask.DiffLine{
		{Kind: ask.LineContext, Old: 10, New: 10}, {Kind: ask.LineContext, Old: 11, New: 11},
		{Kind: ask.LineRemoved, Old: 12}, {Kind: ask.LineAdded, New: 12}, {Kind: ask.LineAdded, New: 13},
		{Kind: ask.LineContext, Old: 13, New: 14}, {Kind: ask.LineContext, Old: 14, New: 15},
	}
	if !reflect.DeepEqual(files[0].Lines, want) {
		t.Errorf("lines: got %+v\nwant %+v", files[0].Lines, want)
	}
	if f := files[1]; f.From != "" || f.To != "docs/retry.md" || len(f.Lines) != 2 || f.Lines[1].New != 2 {
		t.Errorf("new file: %+v", f)
	}
	if f := ask.ParseDiff(deletedFile, ""); len(f) != 1 || f[0].Name() != "old/legacy.go" || f[0].To != "" || f[0].Lines[2].Old != 3 {
		t.Errorf("deleted file: %+v", f)
	}
	if f := ask.ParseDiff(hunksOnly, "notes.txt"); len(f) != 1 || f[0].Name() != "notes.txt" || len(f[0].Lines) != 3 {
		t.Errorf("hunks only: %+v", f)
	}
	if f := ask.ParseDiff("not a diff at all\n", "x"); len(f) != 0 {
		t.Errorf("not a diff: %+v", f)
	}
	renamed := "diff --git a/a.txt b/b.txt\nsimilarity index 90%\nrename from a.txt\nrename to b.txt\n--- a/a.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-x\n+y\n"
	if f := ask.ParseDiff(renamed, ""); len(f) != 1 || f[0].From != "a.txt" || f[0].To != "b.txt" || f[0].Lines[1].New != 1 {
		t.Errorf("renamed: %+v", f)
	}
	if f := ask.ParseDiff("diff --git a/x y.txt b/x y.txt\nBinary files differ\n", ""); len(f) != 1 || f[0].To != "x y.txt" {
		t.Errorf("binary with a space: %+v", f)
	}
}

func TestLineComments(t *testing.T) {
	long := strings.Repeat("é", ask.MaxLineCommentRunes+1)
	many := make([]ask.LineComment, ask.MaxLineComments+1)
	for i := range many {
		many[i] = comment("docs/retry.md", 1, ask.SideNew, strings.Repeat("x", i+1))
	}
	for _, tc := range []struct {
		name     string
		blocks   []ask.Block
		reply    ask.Reply
		mentions []string // empty: accepted
	}{
		{"approved with comments on both sides", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{
				comment("src/retry.go", 12, ask.SideNew, "Good: `retryable` decides."),
				comment("src/retry.go", 12, ask.SideOld, "This was the bug."),
				comment("src/retry.go", 10, ask.SideOld, "Context, old side."),
				comment("docs/retry.md", 2, ask.SideNew, "Say which codes."),
			}}, nil},
		{"changes requested with a comment", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeChangesRequested, Feedback: "See the comment.", Comments: []ask.LineComment{
				comment("src/retry.go", 13, ask.SideNew, "Wrap the error."),
			}}, nil},
		{"a deleted file by its old lines", []ask.Block{diffBlock(deletedFile, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("old/legacy.go", 3, ask.SideOld, "Gone, good.")}}, nil},
		{"a diff of hunks only, by its block's filename", []ask.Block{diffBlock(hunksOnly, "notes.txt")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("notes.txt", 2, ask.SideNew, "ok")}}, nil},
		{"the second of two diff blocks", []ask.Block{diffBlock(hunksOnly, "notes.txt"), diffBlock(deletedFile, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("old/legacy.go", 1, ask.SideOld, "ok")}}, nil},
		{"no comments without a diff", nil,
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("a.go", 1, ask.SideNew, "x")}},
			[]string{"comments", "shows no diff"}},
		{"a file the diff does not have", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("src/other.go", 1, ask.SideNew, "x")}},
			[]string{"comments[0].path", `"src/other.go" is not a file`, `"src/retry.go", "docs/retry.md"`}},
		{"a path with its git prefix", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("b/src/retry.go", 12, ask.SideNew, "x")}},
			[]string{"not a file"}},
		{"a line outside the hunks", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeChangesRequested, Feedback: "f", Comments: []ask.LineComment{
				comment("src/retry.go", 12, ask.SideNew, "ok"), comment("src/retry.go", 40, ask.SideNew, "x")}},
			[]string{"comments[1]", "line 40 of src/retry.go's new file", "new lines 10-15"}},
		{"an added line on the old side", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("docs/retry.md", 1, ask.SideOld, "x")}},
			[]string{"old file", "no old lines"}},
		{"a removed line on the new side", []ask.Block{diffBlock(deletedFile, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("old/legacy.go", 1, ask.SideNew, "x")}},
			[]string{"new file"}},
		{"line zero", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("src/retry.go", 0, ask.SideNew, "x")}},
			[]string{"comments[0].line", "1 or more"}},
		{"an unknown side", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("src/retry.go", 12, "left", "x")}},
			[]string{"comments[0].side", `"left"`}},
		{"blank text", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("src/retry.go", 12, ask.SideNew, " \n")}},
			[]string{"comments[0].text must not be empty", "src/retry.go:12"}},
		{"text too long", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("src/retry.go", 12, ask.SideNew, long)}},
			[]string{"comments[0].text is 2001 characters", "2000"}},
		{"a bidirectional control", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{comment("src/retry.go", 12, ask.SideNew, "a\u202eb")}},
			[]string{"comments[0].text", "U+202E"}},
		{"too many", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: many},
			[]string{"101 line comments", "at most 100"}},
		{"the same comment twice", []ask.Block{diffBlock(twoFiles, "")},
			ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{
				comment("src/retry.go", 12, ask.SideNew, "x"), comment("src/retry.go", 12, ask.SideNew, "x")}},
			[]string{"comments[1] repeats"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := diffReview(t, tc.blocks...)
			before := deepCopy(a)
			err := ask.ApplyReply(a, tc.reply, alice, newClock())
			if len(tc.mentions) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				mustHold(t, a)
				if a.Status != ask.Closed || !reflect.DeepEqual(a.Thread[len(a.Thread)-1].Reply.Comments, tc.reply.Comments) {
					t.Fatalf("the reply's comments were not kept: %+v", a.Thread)
				}
				b, err := json.Marshal(a)
				if err != nil {
					t.Fatal(err)
				}
				if err := contract.ValidateModel("Ask", b); err != nil {
					t.Fatalf("the contract refuses the ask: %v\n%s", err, b)
				}
				var back ask.Ask
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatal(err)
				}
				if got := back.Thread[len(back.Thread)-1].Reply.Comments; !reflect.DeepEqual(got, tc.reply.Comments) {
					t.Fatalf("comments after JSON: %+v", got)
				}
				return
			}
			wantError(t, err, ask.EReplyInvalid, tc.mentions...)
			wantUnchanged(t, before, a)
		})
	}
}

// A deadline's default is a reply the person could give: its comments are held to the diff too.
func TestLineCommentsInADeadlineDefault(t *testing.T) {
	in := reviewInput()
	in.Content = append(in.Content, diffBlock(twoFiles, ""))
	in.Deadline = &ask.DeadlineInput{InSeconds: 3600, Default: &ask.Reply{Outcome: ask.OutcomeApproved,
		Comments: []ask.LineComment{comment("src/retry.go", 99, ask.SideNew, "x")}}}
	_, err := ask.NewReview("r1", in, ask.Origin{Space: "s1"}, newClock())
	wantError(t, err, ask.EInputInvalid, "deadline.default", "line 99")
}

func TestLineCommentsJSON(t *testing.T) {
	for _, tc := range []struct {
		body string
		want string // error mention; empty: decodes
	}{
		{`{"outcome":"approved","comments":[{"path":"a.go","line":3,"side":"new","text":"x"}]}`, ""},
		{`{"outcome":"approved","comments":[]}`, ""},
		{`{"outcome":"changes_requested","feedback":"f","comments":[{"path":"a.go","line":3,"side":"old","text":"x"}]}`, ""},
		{`{"outcome":"follow_up","question":"?","comments":[]}`, `unknown field "comments"`},
		{`{"outcome":"dismissed","comments":[]}`, `unknown field "comments"`},
		{`{"outcome":"approved","comments":{}}`, "approved.comments has the wrong type"},
		{`{"outcome":"approved","comments":[{"path":"a.go","line":3,"side":"new"}]}`, "approved.comments[0].text is required"},
		{`{"outcome":"approved","comments":[{"path":"a.go","line":1.5,"side":"new","text":"x"}]}`, "approved.comments[0].line has the wrong type"},
		{`{"outcome":"approved","comments":[{"path":"a.go","line":3,"side":"new","text":"x","at":1}]}`, `unknown field "at"`},
	} {
		var r ask.Reply
		err := json.Unmarshal([]byte(tc.body), &r)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
				continue
			}
			out, _ := json.Marshal(r)
			if err := contract.ValidateModel("Reply", out); err != nil {
				t.Errorf("%s: the contract refuses %s: %v", tc.body, out, err)
			}
			if strings.Contains(tc.body, `"comments":[]`) && strings.Contains(string(out), "comments") {
				t.Errorf("%s: empty comments written as %s", tc.body, out)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.body, err, tc.want)
		}
	}
}

// FuzzLineComments holds the diff parser and the validator to their rules on any diff and any
// comment: nothing panics; a comment is accepted exactly when its file is in the parsed diff and
// the parsed file shows its line on its side; a refusal is reply.invalid and leaves the ask as it was.
func FuzzLineComments(f *testing.F) {
	f.Add(twoFiles, "", "src/retry.go", 12, "new", "ok")
	f.Add(twoFiles, "", "src/retry.go", 12, "old", "ok")
	f.Add(deletedFile, "", "old/legacy.go", 2, "old", "x")
	f.Add(hunksOnly, "notes.txt", "notes.txt", 1, "new", "x")
	f.Add("@@ -1 +1 @@\n-a\n-b\n+c\n", "f", "f", 1, "new", "x")
	f.Add("--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n", "", "b", 1, "new", "x")
	f.Fuzz(func(t *testing.T, diff, filename, path string, line int, side, text string) {
		files := ask.ParseDiff(diff, filename)
		for _, file := range files {
			for _, l := range file.Lines {
				if l.Kind != ask.LineContext && l.Kind != ask.LineAdded && l.Kind != ask.LineRemoved {
					t.Fatalf("line of kind %q", l.Kind)
				}
			}
		}
		if strings.TrimSpace(diff) == "" || !utf8.ValidString(diff+filename+path+text) {
			return
		}
		a, err := ask.NewReview("r1", ask.ReviewInput{Title: "T", Project: "p",
			Content: []ask.Block{{Type: ask.BlockDiff, Diff: diff, Filename: filename}}}, ask.Origin{Space: "s1"}, newClock())
		if err != nil {
			return // not a review's input: nothing to comment on
		}
		c := ask.LineComment{Path: path, Line: line, Side: ask.LineSide(side), Text: text}
		before := deepCopy(a)
		err = ask.ApplyReply(a, ask.Reply{Outcome: ask.OutcomeApproved, Comments: []ask.LineComment{c}}, alice, newClock())
		shown := false
		for _, file := range files {
			if file.From != path && file.To != path {
				continue
			}
			for _, l := range file.Lines {
				if (c.Side == ask.SideNew && l.Kind != ask.LineRemoved && l.New == line) ||
					(c.Side == ask.SideOld && l.Kind != ask.LineAdded && l.Old == line) {
					shown = true
				}
			}
		}
		valid := shown && line >= 1 && path != "" && utf8.RuneCountInString(path) <= ask.MaxLineCommentPath &&
			!ask.Blank(text) && utf8.RuneCountInString(text) <= ask.MaxLineCommentRunes && !strings.ContainsFunc(text, ask.BidiControl)
		if valid != (err == nil) {
			t.Fatalf("comment %+v on %q: valid %v, got %v", c, diff, valid, err)
		}
		if err != nil {
			wantError(t, err, ask.EReplyInvalid)
			wantUnchanged(t, before, a)
			return
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var back ask.Ask
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("an accepted comment does not read back: %v\n%s", err, b)
		}
		if got := back.Thread[len(back.Thread)-1].Reply.Comments; len(got) != 1 || got[0] != c {
			t.Fatalf("comment after JSON: %+v, want %+v", got, c)
		}
	})
}
