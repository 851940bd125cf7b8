package ask_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loopback-hq/loopback/shared/ask"
)

func TestHighlight(t *testing.T) {
	text := strings.Repeat("lorem ipsum ", 20) + "Deploy events_v2 to staging, then deploy again." + strings.Repeat(" dolor", 40)
	got := ask.Highlight(text, []string{"deploy", "stag"})
	var marked []string
	for _, f := range got {
		if f.Match {
			marked = append(marked, f.Text)
		}
	}
	if strings.Join(marked, ",") != "Deploy,staging,deploy" {
		t.Fatalf("marked %v in %+v", marked, got)
	}
	if got[0].Text[:len("…")] != "…" || !strings.HasSuffix(got[len(got)-1].Text, "…") {
		t.Fatalf("a window in the middle is not marked as cut: %+v", got)
	}
	if h := ask.Highlight("nothing here", []string{"x"}); len(h) != 1 || h[0].Match || h[0].Text != "nothing here" {
		t.Fatalf("no match: %+v", h)
	}
}

func TestSearchWordList(t *testing.T) {
	if got := ask.SearchWordList("Fix PR #1043", "fix the Login, login v2", 100); got != " fix pr 1043 the login v2 " {
		t.Fatalf("%q", got)
	}
	if got := ask.SearchWordList("aaaa bbbb", "", 7); got != " aaaa " {
		t.Fatalf("capped: %q", got)
	}
}

// FuzzSearchInput: any query is a query or a request.invalid, and its highlight is the text's
// own characters, never more than a window of them.
func FuzzSearchInput(f *testing.F) {
	for _, s := range []string{"deploy", `"a" OR b*`, "NEAR(x y)", "é ü 日本", "\xff", strings.Repeat("a ", 9)} {
		f.Add(s, "text with deploy and NEAR words")
	}
	f.Fuzz(func(t *testing.T, q, text string) {
		parsed, err := ask.ParseSearch(ask.SearchInput{Q: q})
		if err != nil {
			if ask.ErrorCode(err) != ask.ERequestInvalid {
				t.Fatalf("%q: %v", q, err)
			}
			return
		}
		for _, w := range parsed.Terms {
			if w == "" || strings.ContainsAny(w, `"*():^-+ `) {
				t.Fatalf("%q: term %q", q, w)
			}
		}
		if !utf8.ValidString(text) {
			return
		}
		var n int
		for _, fr := range ask.Highlight(text, parsed.Terms) {
			n += utf8.RuneCountInString(fr.Text)
		}
		if n > 200+2 {
			t.Fatalf("highlight of %d runes", n)
		}
	})
}
