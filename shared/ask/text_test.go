package ask_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/loopback-hq/loopback/shared/ask"
)

// spoofs are what a one-line field must refuse: a right-to-left override that shows
// "invoices\u202Egnp.exe" as "invoicesexe.png", the other embeddings, overrides and isolates,
// control characters and line breaks.
var spoofs = []string{
	"invoices\u202Egnp.exe", "a\u202Ab", "a\u202Bb", "a\u202Cb", "a\u202Db",
	"a\u2066b", "a\u2067b", "a\u2068b", "a\u2069b",
	"two\nlines", "tab\there", "nul\x00", "esc\x1b[31m", "del\x7f", "c1\u0085", "ls\u2028", "ps\u2029",
}

// TestOneLineFields: titles, labels, projects, file names and credential names refuse every
// spoof with input.invalid; multi-line fields keep newlines and tabs but refuse the directional
// overrides; a person's reply is held to the same rule (reply.invalid).
func TestOneLineFields(t *testing.T) {
	for _, v := range spoofs {
		bidi := strings.ContainsFunc(v, ask.BidiControl)
		q := questionInput("A", v)
		q.Project = "p"
		r := reviewInput()
		r.Title = v
		b := briefingInput(1)
		b.Sections[0].Points[0].Title = v
		proj := questionInput("A", "B")
		proj.Project = v
		file := reviewInput()
		file.Content = []ask.Block{{Type: ask.BlockCode, Code: "x", Filename: v}}
		for name, err := range map[string]error{
			"a choice's label":  q.Validate(),
			"a review's title":  r.Validate(),
			"a point's title":   b.Validate(),
			"a project":         proj.Validate(),
			"a code's filename": file.Validate(),
			"a credential name": ask.CheckName(v),
			"ask.OneLine":       ask.OneLine("x", v),
		} {
			if ask.ErrorCode(err) != ask.EInputInvalid {
				t.Errorf("%s %q: %v, want input.invalid", name, v, err)
			}
		}
		md := reviewInput()
		md.Content = []ask.Block{{Type: ask.BlockMarkdown, Text: "text: " + v}}
		code := reviewInput()
		code.Content = []ask.Block{{Type: ask.BlockCode, Code: "x := " + v}}
		question := questionInput("A", "B")
		question.Question = "Which? " + v
		for name, err := range map[string]error{"markdown": md.Validate(), "code": code.Validate(), "a question": question.Validate()} {
			if bidi && ask.ErrorCode(err) != ask.EInputInvalid {
				t.Errorf("%s with %q: %v, want input.invalid", name, v, err)
			}
			if !bidi && err != nil {
				t.Errorf("%s with %q: %v; a multi-line field keeps it", name, v, err)
			}
		}
		a := openQuestion(t)
		err := ask.ApplyReply(a, ask.Reply{Outcome: ask.OutcomeAnswered, Text: "I pick " + v}, bob, newClock())
		if bidi && ask.ErrorCode(err) != ask.EReplyInvalid {
			t.Errorf("a reply's text with %q: %v, want reply.invalid", v, err)
		}
	}
	if got := ask.CleanOneLine("claude\u202E-code\n 2.1\x00"); got != "claude-code 2.1" {
		t.Errorf("CleanOneLine: %q", got)
	}
	// Text in any script, and the marks that reorder nothing, pass.
	for _, v := range []string{"שלום עולם", "مرحبا", "a\u200Eb\u200Fc\u061Cd", "日本語", "emoji 🎉"} {
		if err := ask.OneLine("x", v); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
}

// FuzzOneLine holds the rule for any text: what OneLine accepts holds no control, line break or
// directional control; what MultiLine accepts no directional control; CleanOneLine's result is
// always accepted and only ever drops characters; a question whose label is the text is accepted
// only if the label is one line.
func FuzzOneLine(f *testing.F) {
	for _, s := range append(spoofs, "plain", "", "שלום", "a\u200Eb") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		bad := func(r rune) bool {
			return unicode.Is(unicode.Cc, r) || r == '\u2028' || r == '\u2029' || (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
		}
		bidi := func(r rune) bool { return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069') }
		if err := ask.OneLine("x", v); (err == nil) == strings.ContainsFunc(v, bad) {
			t.Fatalf("OneLine(%q) = %v", v, err)
		} else if err != nil && ask.ErrorCode(err) != ask.EInputInvalid {
			t.Fatalf("OneLine(%q): code %s", v, ask.ErrorCode(err))
		}
		if err := ask.MultiLine("x", v); (err == nil) == strings.ContainsFunc(v, bidi) {
			t.Fatalf("MultiLine(%q) = %v", v, err)
		}
		c := ask.CleanOneLine(v)
		if err := ask.OneLine("x", c); err != nil {
			t.Fatalf("CleanOneLine(%q) = %q, refused: %v", v, c, err)
		}
		if utf8.ValidString(v) && utf8.RuneCountInString(c) > utf8.RuneCountInString(v) {
			t.Fatalf("CleanOneLine(%q) = %q grew", v, c)
		}
		q := questionInput("A", v)
		q.Project = "p"
		if err := q.Validate(); err == nil && strings.ContainsFunc(v, bad) {
			t.Fatalf("a label %q was accepted", v)
		}
	})
}
