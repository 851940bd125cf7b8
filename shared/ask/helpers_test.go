package ask_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// t0 is when every test's clock starts.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// newClock returns a Clock that reads t0 on its first call and one second more on every call after,
// so that every turn of a test has its own, predictable time.
func newClock() ask.Clock {
	n := 0
	return func() time.Time {
		t := t0.Add(time.Duration(n) * time.Second)
		n++
		return t
	}
}

var (
	alice = &ask.Actor{ID: "u-alice", Name: "Alice"}
	bob   = &ask.Actor{ID: "u-bob"}
)

// --- inputs ---

func questionInput(labels ...string) ask.QuestionInput {
	in := ask.QuestionInput{Question: "Which **database** should the local binary use?", Project: "loopback"}
	for _, l := range labels {
		in.Options = append(in.Options, ask.Choice{Label: l})
	}
	return in
}

func reviewInput() ask.ReviewInput {
	return ask.ReviewInput{
		Title:   "Retry failed deliveries",
		Content: []ask.Block{{Type: ask.BlockMarkdown, Text: "The fan-out now retries a 5xx twice."}},
		Project: "loopback",
	}
}

// briefingInput makes a briefing with one section per size, each with that many points.
func briefingInput(sizes ...int) ask.BriefingInput {
	in := ask.BriefingInput{Title: "Findings from the audit", Summary: "What I found.", Project: "loopback"}
	n := 0
	for i, size := range sizes {
		s := ask.BriefingSection{Title: fmt.Sprintf("Section %d", i+1)}
		for range size {
			n++
			s.Points = append(s.Points, ask.BriefingPoint{Title: fmt.Sprintf("Finding %d", n)})
		}
		in.Sections = append(in.Sections, s)
	}
	return in
}

func points(titles ...string) []ask.BriefingPoint {
	var ps []ask.BriefingPoint
	for _, t := range titles {
		ps = append(ps, ask.BriefingPoint{Title: t})
	}
	return ps
}

// --- asks ---

func mustQuestion(t testing.TB, in ask.QuestionInput, now ask.Clock) *ask.Ask {
	t.Helper()
	a, err := ask.NewQuestion("q1", in, ask.Origin{Space: "s1", Client: "claude-code 2.1.0"}, now)
	if err != nil {
		t.Fatalf("NewQuestion: %v", err)
	}
	return a
}

func mustReview(t testing.TB, in ask.ReviewInput, now ask.Clock) *ask.Ask {
	t.Helper()
	a, err := ask.NewReview("r1", in, ask.Origin{Space: "s1"}, now)
	if err != nil {
		t.Fatalf("NewReview: %v", err)
	}
	return a
}

func mustBriefing(t testing.TB, in ask.BriefingInput, now ask.Clock) *ask.Ask {
	t.Helper()
	a, err := ask.NewBriefing("b1", in, ask.Origin{Space: "s1", RaisedBy: alice}, now)
	if err != nil {
		t.Fatalf("NewBriefing: %v", err)
	}
	return a
}

func mustReply(t testing.TB, a *ask.Ask, r ask.Reply, now ask.Clock) {
	t.Helper()
	if err := ask.ApplyReply(a, r, alice, now); err != nil {
		t.Fatalf("ApplyReply(%s): %v", r.Outcome, err)
	}
	mustHold(t, a)
}

func mustAnswer(t testing.TB, a *ask.Ask, now ask.Clock, answers ...ask.PointAnswer) {
	t.Helper()
	if err := ask.AnswerBriefing(a, ask.BriefingAnswerInput{AskID: a.ID, Answers: answers}, now); err != nil {
		t.Fatalf("AnswerBriefing: %v", err)
	}
	mustHold(t, a)
}

func mustHold(t testing.TB, a *ask.Ask) {
	t.Helper()
	if err := ask.CheckInvariants(a); err != nil {
		t.Fatalf("CheckInvariants: %v", err)
	}
}

// --- replies ---

func answered(text string, selected ...string) ask.Reply {
	if selected == nil {
		selected = []string{}
	}
	return ask.Reply{Outcome: ask.OutcomeAnswered, Selected: selected, Text: text}
}

func approved(note string) ask.Reply { return ask.Reply{Outcome: ask.OutcomeApproved, Note: note} }

func changesRequested(feedback string) ask.Reply {
	return ask.Reply{Outcome: ask.OutcomeChangesRequested, Feedback: feedback}
}

func followUp(q string) ask.Reply { return ask.Reply{Outcome: ask.OutcomeFollowUp, Question: q} }

func dismissed() ask.Reply { return ask.Reply{Outcome: ask.OutcomeDismissed} }

func responded(ps ...ask.PointReply) ask.Reply {
	return ask.Reply{Outcome: ask.OutcomeResponded, Points: ps}
}

func say(point, text string) ask.PointReply { return ask.PointReply{Point: point, Text: text} }

func resolve(point string) ask.PointReply { return ask.PointReply{Point: point, Resolved: true} }

func resolveAll(ids ...string) []ask.PointReply {
	var out []ask.PointReply
	for _, id := range ids {
		out = append(out, resolve(id))
	}
	return out
}

func answer(point, text string, sub ...string) ask.PointAnswer {
	return ask.PointAnswer{Point: point, Answer: text, Points: points(sub...)}
}

// --- checks ---

// wantError checks that err is an *ask.Error with code, whose message contains every one of
// mentions (field paths, ids).
func wantError(t testing.TB, err error, code string, mentions ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	var e *ask.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %T %v, want an *ask.Error", err, err)
	}
	if e.Code != code {
		t.Fatalf("got code %s (%s), want %s", e.Code, e.Message, code)
	}
	for _, m := range mentions {
		if !strings.Contains(e.Message, m) {
			t.Errorf("message %q does not mention %q", e.Message, m)
		}
	}
}

// wantUnchanged fails when after differs from before in any way.
func wantUnchanged(t testing.TB, before, after *ask.Ask) {
	t.Helper()
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("a refused change altered the ask:\nbefore %+v\nafter  %+v", before, after)
	}
}

func ids(ps *ask.Points) []string { return append([]string(nil), ps.Order...) }

// --- deep copy ---

// deepCopy copies v and everything it points to, so that a change to the original through any
// pointer, slice or map cannot show in the copy.
func deepCopy[T any](v T) T {
	return copyValue(reflect.ValueOf(&v).Elem()).Interface().(T)
}

func copyValue(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(copyValue(v.Elem()))
			out.Set(p)
		}
	case reflect.Slice:
		if !v.IsNil() {
			s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			for i := range v.Len() {
				s.Index(i).Set(copyValue(v.Index(i)))
			}
			out.Set(s)
		}
	case reflect.Map:
		if !v.IsNil() {
			m := reflect.MakeMapWithSize(v.Type(), v.Len())
			for it := v.MapRange(); it.Next(); {
				m.SetMapIndex(it.Key(), copyValue(it.Value()))
			}
			out.Set(m)
		}
	case reflect.Struct:
		out.Set(v) // unexported fields (time.Time's) are values; copy them whole
		for i := range v.NumField() {
			if out.Field(i).CanSet() {
				out.Field(i).Set(copyValue(v.Field(i)))
			}
		}
	default:
		out.Set(v)
	}
	return out
}
