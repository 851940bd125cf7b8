package ask_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

// inputCase is one rule of an agent's input: the input, and either no error or input.invalid with
// a message naming field.
type inputCase struct {
	name  string
	in    interface{ Validate() error }
	field string // "" when the input is valid
}

func runInputCases(t *testing.T, cases []inputCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.in.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			wantError(t, err, ask.EInputInvalid, tc.field)
		})
	}
}

// padTo returns the input with the string *pad filled with 'a's so that the input, as JSON, is
// exactly size bytes.
func padTo[T any](t *testing.T, in T, pad func(*T) *string, size int) *T {
	t.Helper()
	p := &in
	*pad(p) = "a" // not empty: an empty optional field is left out of the JSON
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	*pad(p) = strings.Repeat("a", size-len(b)+1)
	if b, _ := json.Marshal(p); len(b) != size {
		t.Fatalf("padded input is %d bytes, want %d", len(b), size)
	}
	return p
}

func withOptions(in ask.QuestionInput, opts ...ask.Choice) *ask.QuestionInput {
	in.Options = opts
	return &in
}

func labels(ls ...string) []ask.Choice {
	var cs []ask.Choice
	for _, l := range ls {
		cs = append(cs, ask.Choice{Label: l})
	}
	return cs
}

func TestQuestionInputRules(t *testing.T) {
	q := questionInput()
	noQuestion, noProject := q, q
	noQuestion.Question, noProject.Project = "", ""
	question := func(in ask.QuestionInput) *ask.QuestionInput { return &in }
	emptyOptions := q
	emptyOptions.Options = []ask.Choice{}
	withContext := questionInput("A", "B")
	withContext.Multiple, withContext.Context = true, "We run on Lambda too."

	invisible, fillers := q, q
	invisible.Question, fillers.Project = "\u200b\u200d\ufeff \u00ad", "\u3164\u2800"
	runInputCases(t, []inputCase{
		{"question_required", question(noQuestion), "question"},
		{"question_of_invisible_characters_refused", question(invisible), "question"},
		{"project_of_blank_fillers_refused", question(fillers), "project"},
		{"project_required", question(noProject), "project"},
		{"valid_with_every_field", question(withContext), ""},
		{"options_0_ok", question(q), ""},
		{"options_empty_list_refused_minItems_2", &emptyOptions, "options"},
		{"options_1_refused", withOptions(q, labels("A")...), "options"},
		{"options_2_ok", withOptions(q, labels("A", "B")...), ""},
		{"options_6_ok", withOptions(q, labels("A", "B", "C", "D", "E", "F")...), ""},
		{"options_7_refused", withOptions(q, labels("A", "B", "C", "D", "E", "F", "G")...), "options"},
		{"label_empty_refused", withOptions(q, labels("A", "")...), "options[1].label"},
		{"label_80_ascii_ok", withOptions(q, labels(strings.Repeat("x", 80), "B")...), ""},
		{"label_81_ascii_refused", withOptions(q, labels("A", strings.Repeat("x", 81))...), "options[1].label"},
		// Limits count characters, not bytes: 80 two-byte or three-byte letters are within 80.
		{"label_80_runes_multibyte_ok", withOptions(q, labels(strings.Repeat("é", 80), strings.Repeat("日", 80))...), ""},
		{"label_81_runes_multibyte_refused", withOptions(q, labels(strings.Repeat("é", 81), "B")...), "options[0].label"},
		{"label_81_runes_cjk_refused", withOptions(q, labels("A", strings.Repeat("日", 81))...), "options[1].label"},
		{"label_81_runes_emoji_refused", withOptions(q, labels("A", strings.Repeat("🙂", 81))...), "options[1].label"},
		{"labels_duplicate_refused", withOptions(q, labels("SQLite", "Postgres", "SQLite")...), "options[2].label"},
		{"labels_differing_in_case_ok", withOptions(q, labels("sqlite", "SQLite")...), ""},
		{"size_256KiB_at_limit_ok", padTo(t, q, func(in *ask.QuestionInput) *string { return &in.Question }, ask.MaxInputBytes), ""},
		{"size_256KiB_plus_1_refused", padTo(t, q, func(in *ask.QuestionInput) *string { return &in.Question }, ask.MaxInputBytes+1), "256 KiB"},
		{"size_counts_context_too", padTo(t, q, func(in *ask.QuestionInput) *string { return &in.Context }, ask.MaxInputBytes+1), "question"},
	})
}

func TestReviewInputRules(t *testing.T) {
	r := reviewInput()
	review := func(f func(*ask.ReviewInput)) *ask.ReviewInput {
		in := reviewInput()
		f(&in)
		return &in
	}
	content := func(bs ...ask.Block) *ask.ReviewInput {
		return review(func(in *ask.ReviewInput) { in.Content = bs })
	}
	md := ask.Block{Type: ask.BlockMarkdown, Text: "Plan"}

	runInputCases(t, []inputCase{
		{"valid", &r, ""},
		{"title_required", review(func(in *ask.ReviewInput) { in.Title = "" }), "title"},
		{"title_1_ok", review(func(in *ask.ReviewInput) { in.Title = "x" }), ""},
		{"title_200_runes_ok", review(func(in *ask.ReviewInput) { in.Title = strings.Repeat("ü", 200) }), ""},
		{"title_201_runes_refused", review(func(in *ask.ReviewInput) { in.Title = strings.Repeat("ü", 201) }), "title"},
		{"project_required", review(func(in *ask.ReviewInput) { in.Project = "" }), "project"},
		{"content_required", content(), "content"},
		{"every_block_type_ok", content(
			md,
			ask.Block{Type: ask.BlockCode, Code: "fmt.Println()", Language: "go", Filename: "main.go"},
			ask.Block{Type: ask.BlockDiff, Diff: "--- a\n+++ b\n", Filename: "main.go"},
			ask.Block{Type: ask.BlockImage, UploadID: "up1", Caption: "Before"},
		), ""},
		{"markdown_needs_text", content(ask.Block{Type: ask.BlockMarkdown}), "content[0].text"},
		{"code_needs_code", content(md, ask.Block{Type: ask.BlockCode, Language: "go"}), "content[1].code"},
		{"diff_needs_diff", content(md, md, ask.Block{Type: ask.BlockDiff, Filename: "a.go"}), "content[2].diff"},
		{"image_needs_uploadId", content(ask.Block{Type: ask.BlockImage, Caption: "x"}), "content[0].uploadId"},
		{"unknown_block_type_refused", content(md, ask.Block{Type: "video", Text: "x"}), "content[1].type"},
		{"empty_block_type_refused", content(ask.Block{Text: "x"}), "content[0].type"},
		{"revises_is_free_form_here", review(func(in *ask.ReviewInput) { in.Revises = "r0" }), ""},
		{"size_256KiB_at_limit_ok", padTo(t, r, func(in *ask.ReviewInput) *string { return &in.Summary }, ask.MaxInputBytes), ""},
		{"size_256KiB_plus_1_refused", padTo(t, r, func(in *ask.ReviewInput) *string { return &in.Summary }, ask.MaxInputBytes+1), "the review"},
	})
}

func TestBriefingInputRules(t *testing.T) {
	briefing := func(f func(*ask.BriefingInput), sizes ...int) *ask.BriefingInput {
		in := briefingInput(sizes...)
		f(&in)
		return &in
	}
	same := func(*ask.BriefingInput) {}
	title := func(s, p int, title string) func(*ask.BriefingInput) {
		return func(in *ask.BriefingInput) { in.Sections[s].Points[p].Title = title }
	}
	b := briefingInput(2, 3)

	runInputCases(t, []inputCase{
		{"valid", &b, ""},
		{"title_required", briefing(func(in *ask.BriefingInput) { in.Title = "" }, 1), "title"},
		{"title_200_runes_ok", briefing(func(in *ask.BriefingInput) { in.Title = strings.Repeat("日", 200) }, 1), ""},
		{"title_201_runes_refused", briefing(func(in *ask.BriefingInput) { in.Title = strings.Repeat("日", 201) }, 1), "title"},
		{"project_required", briefing(func(in *ask.BriefingInput) { in.Project = "" }, 1), "project"},
		{"sections_required", briefing(same), "sections"},
		{"section_needs_a_point", briefing(same, 2, 0), "sections[1].points"},
		{"section_title_optional", briefing(func(in *ask.BriefingInput) { in.Sections[0].Title = "" }, 1), ""},
		{"point_title_required", briefing(title(0, 1, ""), 2), "sections[0].points[1].title"},
		{"point_title_1_ok", briefing(title(0, 0, "x"), 1), ""},
		{"point_title_200_runes_ok", briefing(title(1, 0, strings.Repeat("é", 200)), 1, 1), ""},
		{"point_title_201_runes_refused", briefing(title(1, 0, strings.Repeat("é", 201)), 1, 1), "sections[1].points[0].title"},
		{"point_content_checked", briefing(func(in *ask.BriefingInput) {
			in.Sections[0].Points[0].Content = []ask.Block{{Type: ask.BlockCode}}
		}, 1), "sections[0].points[0].content[0].code"},
		{"points_50_across_sections_ok", briefing(same, 20, 30), ""},
		{"points_50_in_one_section_ok", briefing(same, 50), ""},
		{"points_51_across_sections_refused", briefing(same, 25, 25, 1), "sections"},
		{"size_256KiB_at_limit_ok", padTo(t, b, func(in *ask.BriefingInput) *string { return &in.Summary }, ask.MaxInputBytes), ""},
		{"size_256KiB_plus_1_refused", padTo(t, b, func(in *ask.BriefingInput) *string { return &in.Summary }, ask.MaxInputBytes+1), "the briefing"},
	})
}

// The constructors refuse what Validate refuses, and build nothing.
func TestConstructorsRefuseInvalidInput(t *testing.T) {
	now := newClock()
	if a, err := ask.NewQuestion("q", questionInput("only one"), ask.Origin{}, now); a != nil || err == nil {
		t.Errorf("NewQuestion with one option: %v, %v", a, err)
	}
	if a, err := ask.NewReview("r", ask.ReviewInput{Title: "t", Project: "p"}, ask.Origin{}, now); a != nil || err == nil {
		t.Errorf("NewReview without content: %v, %v", a, err)
	}
	if a, err := ask.NewBriefing("b", briefingInput(51), ask.Origin{}, now); a != nil || err == nil {
		t.Errorf("NewBriefing with 51 points: %v, %v", a, err)
	}
}

func TestNewBriefingNumbersStraightThroughSections(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
		want  [][]string
	}{
		{"one_section", []int{3}, [][]string{{"1", "2", "3"}}},
		{"section_1_with_2_then_section_2_with_3", []int{2, 3}, [][]string{{"1", "2"}, {"3", "4", "5"}}},
		{"three_sections", []int{1, 1, 2}, [][]string{{"1"}, {"2"}, {"3", "4"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := briefingInput(tc.sizes...)
			a := mustBriefing(t, in, newClock())
			var got [][]string
			for i, s := range a.Briefing.Sections {
				var ids []string
				for j, p := range s.Points {
					ids = append(ids, p.ID)
					if p.Title != in.Sections[i].Points[j].Title {
						t.Errorf("point %s has title %q, want %q", p.ID, p.Title, in.Sections[i].Points[j].Title)
					}
				}
				if s.Title != in.Sections[i].Title {
					t.Errorf("section %d has title %q, want %q", i, s.Title, in.Sections[i].Title)
				}
				got = append(got, ids)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ids %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNewAskFields(t *testing.T) {
	now := newClock()
	q := mustQuestion(t, questionInput(), now)
	if q.Kind != ask.KindQuestion || q.Status != ask.AwaitingHuman || q.Project != "loopback" || q.Space != "s1" {
		t.Errorf("question: %+v", q)
	}
	if q.Question.Options == nil || len(q.Question.Options) != 0 {
		t.Errorf("a question without choices has options %#v, want an empty list", q.Question.Options)
	}
	if q.Thread == nil || !q.CreatedAt.Equal(t0) || !q.UpdatedAt.Equal(t0) || q.ClosedAt != nil {
		t.Errorf("question times or thread: %+v", q)
	}
	r, err := ask.NewReview("r2", ask.ReviewInput{Title: "v2", Content: reviewInput().Content, Revises: "r1", Project: "p"},
		ask.Origin{Client: "  cursor 1.0 \n"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Revises != "r1" || r.Client != "cursor 1.0" || r.Review.Title != "v2" {
		t.Errorf("review: %+v", r)
	}
	b := mustBriefing(t, briefingInput(1), now)
	if b.RaisedBy != alice || b.Briefing.Summary != "What I found." {
		t.Errorf("briefing: %+v", b)
	}
}

// TestBlank: what shows as nothing is blank; any visible character is not.
func TestBlank(t *testing.T) {
	for _, s := range []string{"", " \t\n", "\u00a0\u2003\u3000", "\u200b\u200c\u200d\u2060\ufeff", "\u00ad\u200e\u200f", "\x00\x1b", "\u2800\u3164\u115f\u1160\uffa0"} {
		if !ask.Blank(s) {
			t.Errorf("Blank(%q) = false", s)
		}
	}
	for _, s := range []string{"a", " . ", "\u200b日", "🙂", "\u200d0"} {
		if ask.Blank(s) {
			t.Errorf("Blank(%q) = true", s)
		}
	}
}

// TestCheckName: a credential is made only for a name that shows as something, on one line,
// within ask.MaxNameRunes characters (counted as characters, not bytes).
func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"ada":                           true,
		strings.Repeat("日", 200):        true,
		strings.Repeat("日", 201):        false,
		strings.Repeat("x", 200_000):    false,
		" \u200b ":                      false,
		"":                              false,
		"ada\nowner":                    false,
		string([]byte{'a', 0xe6, 0x97}): false,
	} {
		if err := ask.CheckName(name); ok != (err == nil) || (err != nil && ask.ErrorCode(err) != ask.EInputInvalid) {
			t.Errorf("CheckName(%.20q) = %v", name, err)
		}
	}
}
