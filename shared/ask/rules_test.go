package ask_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Rules where the contract is silent but people would expect them: text that is more than
// whitespace, bounded project names, bounded briefings however they grow, one value per key.
func TestInputRulesBeyondTheContract(t *testing.T) {
	long := strings.Repeat("é", ask.MaxProjectRunes+1)
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"a question of whitespace", (&ask.QuestionInput{Question: " \n\t ", Project: "p"}).Validate()},
		{"a project of whitespace", (&ask.QuestionInput{Question: "q", Project: "   "}).Validate()},
		{"a project over 200 characters", (&ask.QuestionInput{Question: "q", Project: long}).Validate()},
		{"a label of whitespace", (&ask.QuestionInput{Question: "q", Project: "p", Options: []ask.Choice{{Label: " "}, {Label: "b"}}}).Validate()},
		{"a review title of whitespace", (&ask.ReviewInput{Title: "  ", Project: "p", Content: []ask.Block{{Type: ask.BlockMarkdown, Text: "x"}}}).Validate()},
		{"a markdown block of whitespace", (&ask.ReviewInput{Title: "t", Project: "p", Content: []ask.Block{{Type: ask.BlockMarkdown, Text: "\n\n"}}}).Validate()},
		{"an answer of whitespace", (&ask.FollowUpInput{AskID: "a", Answer: "  "}).Validate()},
		{"too many sub-points at once", (&ask.BriefingAnswerInput{AskID: "a", Answers: []ask.PointAnswer{{Point: "1", Answer: "x", Points: make([]ask.BriefingPoint, ask.MaxSubPoints+1)}}}).Validate()},
	} {
		if tc.err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if err := (&ask.QuestionInput{Question: "q", Project: strings.Repeat("é", ask.MaxProjectRunes)}).Validate(); err != nil {
		t.Errorf("a project of 200 characters: %v", err)
	}
	for _, body := range []string{
		`{"outcome":"answered","outcome":"dismissed"}`,
		`{"outcome":"responded","points":[{"point":"1","point":"2","resolved":true}]}`,
		`{"outcome":"follow_up","question":"   "}`,
		`{"outcome":"changes_requested","feedback":"\n"}`,
	} {
		var r ask.Reply
		if err := json.Unmarshal([]byte(body), &r); err == nil {
			t.Errorf("%s: decoded as %+v", body, r)
		}
	}
	if err := ask.NoDuplicateKeys([]byte(`{"a":{"b":1,"c":[{"d":1},{"d":2}]},"e":2}`)); err != nil {
		t.Errorf("distinct keys, the same key in sibling objects: %v", err)
	}
	if err := ask.NoDuplicateKeys([]byte(`{"a":[{"d":1,"d":2}]}`)); err == nil {
		t.Error("a duplicate key nested in an array is not found")
	}
}

// TestBriefingBoundedHoweverItGrows: sub-points count towards a briefing's total.
func TestBriefingBoundedHoweverItGrows(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }
	var in ask.BriefingInput
	in.Title, in.Project = "Findings", "p"
	sec := ask.BriefingSection{}
	for range ask.MaxPoints {
		sec.Points = append(sec.Points, ask.BriefingPoint{Title: "a point"})
	}
	in.Sections = []ask.BriefingSection{sec}
	a, err := ask.NewBriefing("b1", in, ask.Origin{Space: "s"}, now)
	if err != nil {
		t.Fatal(err)
	}
	var points []ask.PointReply
	var answers []ask.PointAnswer
	for i := 1; i <= ask.MaxPoints; i++ {
		id := fmt.Sprint(i)
		points = append(points, ask.PointReply{Point: id, Text: "why?"})
		subs := make([]ask.BriefingPoint, 10)
		for j := range subs {
			subs[j].Title = "sub"
		}
		answers = append(answers, ask.PointAnswer{Point: id, Answer: "because", Points: subs})
	}
	if err := ask.ApplyReply(a, ask.Reply{Outcome: ask.OutcomeResponded, Points: points}, nil, now); err != nil {
		t.Fatal(err)
	}
	err = ask.AnswerBriefing(a, ask.BriefingAnswerInput{AskID: a.ID, Answers: answers}, now)
	if ask.ErrorCode(err) != ask.EAnswerInvalid || !strings.Contains(ask.ErrorMessage(err), "at most 500 points") {
		t.Fatalf("50 points growing by 500 sub-points: %v", err)
	}
	if len(a.Thread) != 1 {
		t.Fatalf("a refused answer wrote %d turns", len(a.Thread)-1)
	}
}
