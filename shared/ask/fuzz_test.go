package ask_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
)

// FuzzLifecycle drives an ask through any sequence of replies and answers and holds the rules to
// their invariants after every step.
//
// The input is lines. The first opens the ask: `q`, `r` or `b` followed by the JSON of a
// QuestionInput, ReviewInput or BriefingInput; anything else, or an input the rules refuse, opens a
// default briefing (points 1, 2 | 3, 4, 5). Every further line is one step (at most maxSteps):
//
//	R<json>  a person's reply, decoded into ask.Reply
//	B<json>  an agent's answers, decoded into ask.BriefingAnswerInput (askId filled in when empty)
//	F<json>  an agent's follow-up answer, decoded into ask.FollowUpInput (askId filled in when empty)
//	<other>  a step made up from the line's bytes: a person's reply when the first byte is even, an
//	         agent's answer when it is odd, naming the ask's real points, so that the fuzzer reaches
//	         deep threads without having to spell their JSON
//
// After every step: nothing panicked; a refusal is an *ask.Error of the right class and left the ask
// exactly as it was; an accepted step added to the thread; CheckInvariants holds; a closed ask
// never reopens and its thread never grows; every point id is unique and well formed. At the end,
// the ask survives its JSON and the contract accepts it.
func FuzzLifecycle(f *testing.F) {
	for _, seed := range [][]byte{
		[]byte("q" + `{"question":"Which?","options":[{"label":"A"},{"label":"B"}],"project":"p"}` + "\n" + `R{"outcome":"answered","selected":["A"]}`),
		[]byte("q" + `{"question":"Which?","project":"p"}` + "\n" + `R{"outcome":"follow_up","question":"Why?"}` + "\n" + `F{"answer":"Because."}` + "\n" + `R{"outcome":"answered","selected":[],"text":"Fine."}`),
		[]byte("r" + `{"title":"T","content":[{"type":"markdown","text":"x"}],"project":"p"}` + "\n" + `R{"outcome":"follow_up","question":"?"}` + "\n" + `F{"answer":"!"}` + "\n" + `R{"outcome":"approved"}` + "\n" + `R{"outcome":"dismissed"}`),
		[]byte("x\n" + `R{"outcome":"responded","points":[{"point":"1","text":"?"},{"point":"2","resolved":true}]}` + "\n" + `B{"answers":[{"point":"1","answer":"a","points":[{"title":"1a"}]}]}` + "\n" + `R{"outcome":"responded","points":[{"point":"1","resolved":true},{"point":"3","resolved":true},{"point":"4","resolved":true},{"point":"5","resolved":true}]}`),
		[]byte("x\n\x00\x01\x01\x01\x01\x01\n\x01\x02\n\x00\x00\x00\x00\x00\x00\x01\n\x01\x02"),
		[]byte("x\n" + `R{"outcome":"follow_up","question":"?"}` + "\n" + `R{"outcome":"responded","points":[{"point":"1","text":"?"}]}` + "\n" + `R{"outcome":"dismissed"}` + "\n" + `F{"answer":"late"}`),
	} {
		f.Add(seed)
	}
	f.Fuzz(runLifecycle)
}

// runLifecycle is FuzzLifecycle's body: one input, every step checked.
func runLifecycle(t *testing.T, data []byte) {
	lines := bytes.Split(data, []byte("\n"))
	now := newClock()
	a := openFuzzAsk(t, lines[0], now)
	checkAsk(t, a)
	for i, line := range lines[1:] {
		if i == maxSteps {
			break
		}
		before := deepCopy(a)
		person, err := fuzzStep(a, line, now)
		checkStep(t, before, a, person, err)
		checkAsk(t, a)
	}
	checkJSON(t, a)
}

// maxSteps bounds the steps of one input, so that every input runs quickly.
const maxSteps = 64

func defaultBriefing() ask.BriefingInput { return briefingInput(2, 3) }

func openFuzzAsk(t *testing.T, line []byte, now ask.Clock) *ask.Ask {
	t.Helper()
	var (
		a   *ask.Ask
		err error
	)
	if len(line) > 0 {
		body := line[1:]
		switch line[0] {
		case 'q':
			var in ask.QuestionInput
			if json.Unmarshal(body, &in) == nil {
				a, err = ask.NewQuestion("q1", in, ask.Origin{Space: "s"}, now)
			}
		case 'r':
			var in ask.ReviewInput
			if json.Unmarshal(body, &in) == nil {
				a, err = ask.NewReview("r1", in, ask.Origin{Space: "s"}, now)
			}
		case 'b':
			var in ask.BriefingInput
			if json.Unmarshal(body, &in) == nil {
				a, err = ask.NewBriefing("b1", in, ask.Origin{Space: "s"}, now)
			}
		}
	}
	if err != nil {
		if ask.ErrorCode(err) != ask.EInputInvalid || a != nil {
			t.Fatalf("a refused input gave %v and %v", a, err)
		}
	}
	if a == nil {
		if a, err = ask.NewBriefing("b1", defaultBriefing(), ask.Origin{Space: "s"}, now); err != nil {
			t.Fatal(err)
		}
	}
	if a.Status != ask.AwaitingHuman || len(a.Thread) != 0 || a.ClosedAt != nil {
		t.Fatalf("a new ask is %s with %d turns", a.Status, len(a.Thread))
	}
	return a
}

// fuzzStep applies one line to the ask. It reports whether the step was the person's, and the
// refusal, if any. A line whose JSON does not decode is a step nobody took.
func fuzzStep(a *ask.Ask, line []byte, now ask.Clock) (person bool, err error) {
	if len(line) == 0 {
		return false, nil
	}
	body := line[1:]
	switch line[0] {
	case 'R':
		var r ask.Reply
		if json.Unmarshal(body, &r) != nil {
			return true, nil
		}
		return true, ask.ApplyReply(a, r, alice, now)
	case 'B':
		var in ask.BriefingAnswerInput
		if json.Unmarshal(body, &in) != nil {
			return false, nil
		}
		if in.AskID == "" {
			in.AskID = a.ID
		}
		return false, ask.AnswerBriefing(a, in, now)
	case 'F':
		var in ask.FollowUpInput
		if json.Unmarshal(body, &in) != nil {
			return false, nil
		}
		if in.AskID == "" {
			in.AskID = a.ID
		}
		return false, ask.AnswerFollowUp(a, in, now)
	}
	e := &entropy{b: body}
	if line[0]%2 == 0 {
		return true, ask.ApplyReply(a, madeUpReply(a, e), nil, now)
	}
	return false, madeUpAnswer(a, e, now)
}

// entropy hands out the bytes of a line, then zeros.
type entropy struct {
	b []byte
	i int
}

func (e *entropy) next() int {
	if e.i >= len(e.b) {
		return 0
	}
	e.i++
	return int(e.b[e.i-1])
}

var outcomes = []ask.Outcome{
	ask.OutcomeResponded, ask.OutcomeAnswered, ask.OutcomeApproved, ask.OutcomeChangesRequested,
	ask.OutcomeFollowUp, ask.OutcomeDismissed,
}

// madeUpReply makes a reply of any outcome whose choices and points come from the ask, with now and
// then one that is not there.
func madeUpReply(a *ask.Ask, e *entropy) ask.Reply {
	r := ask.Reply{Outcome: outcomes[e.next()%len(outcomes)]}
	switch r.Outcome {
	case ask.OutcomeAnswered:
		r.Selected = []string{}
		if a.Question != nil {
			for _, o := range a.Question.Options {
				if e.next()%3 == 0 {
					r.Selected = append(r.Selected, o.Label)
				}
			}
		}
		if e.next()%5 == 1 {
			r.Selected = append(r.Selected, "not offered")
		}
		if e.next()%2 == 1 {
			r.Text = "In my own words."
		}
	case ask.OutcomeApproved:
		if e.next()%2 == 1 {
			r.Note = "Nice."
		}
	case ask.OutcomeChangesRequested:
		r.Feedback = "Change this."
	case ask.OutcomeFollowUp:
		r.Question = "Why?"
	case ask.OutcomeResponded:
		for _, id := range ask.BriefingPoints(a).Order {
			switch e.next() % 6 {
			case 1:
				r.Points = append(r.Points, say(id, "What about this?"))
			case 2, 3:
				r.Points = append(r.Points, resolve(id))
			case 4:
				r.Points = append(r.Points, ask.PointReply{Point: id, Text: "Done.", Resolved: true})
			case 5:
				if e.next()%4 == 0 {
					r.Points = append(r.Points, ask.PointReply{Point: id}) // neither words nor resolved
				}
			}
		}
		switch e.next() % 16 {
		case 1:
			r.Points = append(r.Points, say("99", "no such point"))
		case 2:
			if len(r.Points) > 0 {
				r.Points = append(r.Points, r.Points[0]) // named twice
			}
		}
	}
	return r
}

// madeUpAnswer answers a briefing's owed points (and, now and then, skips one or answers an open
// one besides), splitting some into sub-points; on a question or review it answers the follow-up.
func madeUpAnswer(a *ask.Ask, e *entropy, now ask.Clock) error {
	if a.Kind != ask.KindBriefing {
		if e.next()%7 == 1 {
			return ask.AnswerBriefing(a, ask.BriefingAnswerInput{AskID: a.ID, Answers: []ask.PointAnswer{answer("1", "x")}}, now)
		}
		return ask.AnswerFollowUp(a, ask.FollowUpInput{AskID: a.ID, Answer: "Here is why."}, now)
	}
	ps := ask.BriefingPoints(a)
	var in ask.BriefingAnswerInput
	in.AskID = a.ID
	for _, id := range ps.Order {
		st := ps.ByID[id]
		c := e.next()
		switch {
		case st.Pending && c%13 == 12: // skip an owed point
			continue
		case st.Pending, !st.Resolved && c%4 == 1, c%29 == 28:
			pa := ask.PointAnswer{Point: id, Answer: "On " + id + "."}
			for j := range e.next() % 3 {
				pa.Points = append(pa.Points, ask.BriefingPoint{Title: "Part " + strconv.Itoa(j+1) + " of " + id})
			}
			in.Answers = append(in.Answers, pa)
		}
	}
	if e.next()%23 == 1 && len(in.Answers) > 0 {
		in.Answers = append(in.Answers, in.Answers[0]) // answered twice
	}
	return ask.AnswerBriefing(a, in, now)
}

// checkStep holds one step to the rules: the right refusal, or a change that fits.
func checkStep(t *testing.T, before, a *ask.Ask, person bool, err error) {
	t.Helper()
	if err != nil {
		code := ask.ErrorCode(err)
		if !reflect.DeepEqual(before, a) {
			t.Fatalf("refused (%v) but changed:\nbefore %+v\nafter  %+v", err, before, a)
		}
		if person {
			switch {
			case before.Status == ask.Closed:
				if code != ask.EClosed {
					t.Fatalf("a reply on a closed ask got %v, want ask.closed", err)
				}
			case before.Status == ask.AwaitingAgent:
				// Only a briefing's dismissal is taken on the agent's turn, and it is never refused.
				if code != ask.EAgentsTurn {
					t.Fatalf("a reply on the agent's turn got %v, want ask.awaiting_agent", err)
				}
			case code != ask.EReplyInvalid:
				t.Fatalf("a reply on the person's turn got %v, want reply.invalid", err)
			}
		} else {
			switch code {
			case ask.EAnswerInvalid:
			case ask.EClosed:
				if before.Status != ask.Closed {
					t.Fatalf("an answer on an ask that is %s got %v", before.Status, err)
				}
			case ask.EHumansTurn:
				if before.Status != ask.AwaitingHuman {
					t.Fatalf("an answer on an ask that is %s got %v", before.Status, err)
				}
			default:
				t.Fatalf("an answer got %v", err)
			}
		}
		return
	}
	if len(a.Thread) == len(before.Thread) {
		if !reflect.DeepEqual(before, a) {
			t.Fatalf("a step that took no turn changed the ask")
		}
		return // a line that did not decode
	}
	if before.Status == ask.Closed {
		t.Fatalf("a closed ask took a turn: %+v", a.Thread[len(before.Thread):])
	}
	if !reflect.DeepEqual(a.Thread[:len(before.Thread)], before.Thread) {
		t.Fatal("a step rewrote earlier turns")
	}
	last := a.Thread[len(a.Thread)-1]
	if person {
		if len(a.Thread) != len(before.Thread)+1 || last.Author != ask.AuthorHuman || last.Reply == nil {
			t.Fatalf("a reply added %+v", a.Thread[len(before.Thread):])
		}
		if before.Status == ask.AwaitingAgent && (a.Kind != ask.KindBriefing || last.Reply.Outcome != ask.OutcomeDismissed) {
			t.Fatalf("a %s took %s on the agent's turn", a.Kind, last.Reply.Outcome)
		}
	} else {
		if before.Status != ask.AwaitingAgent || a.Status != ask.AwaitingHuman || last.Author != ask.AuthorAgent {
			t.Fatalf("an answer moved %s to %s", before.Status, a.Status)
		}
	}
	if a.UpdatedAt.Before(before.UpdatedAt) || !a.UpdatedAt.Equal(last.At) {
		t.Fatalf("updatedAt %v after %v, last turn at %v", a.UpdatedAt, before.UpdatedAt, last.At)
	}
	if a.Status == ask.Closed && !a.ClosedAt.Equal(last.At) {
		t.Fatalf("closedAt %v, closing turn at %v", a.ClosedAt, last.At)
	}
}

// checkAsk holds the ask to every invariant that does not depend on the step that led to it.
func checkAsk(t *testing.T, a *ask.Ask) {
	t.Helper()
	if err := ask.CheckInvariants(a); err != nil {
		t.Fatal(err)
	}
	// Nothing that would show as nothing was accepted (ask.Blank).
	if ask.Blank(a.Project) {
		t.Fatalf("a blank project was accepted: %q", a.Project)
	}
	for i, e := range a.Thread {
		if e.Author == ask.AuthorAgent && ask.Blank(e.Answer) {
			t.Fatalf("turn %d: a blank answer was accepted: %q", i, e.Answer)
		}
		if r := e.Reply; r != nil && r.Text != "" && ask.Blank(r.Text) && len(r.Selected) == 0 {
			t.Fatalf("turn %d: a blank reply was accepted: %q", i, r.Text)
		}
	}
	switch a.Status {
	case ask.AwaitingHuman, ask.AwaitingAgent, ask.Closed:
	default:
		t.Fatalf("status %q", a.Status)
	}
	if a.Kind == ask.KindBriefing {
		checkPointIDs(t, a)
		ps := ask.BriefingPoints(a)
		switch owed := ps.Pending(); {
		case a.Status == ask.AwaitingAgent && len(owed) == 0:
			t.Fatal("the agent's turn with nothing owed")
		case a.Status == ask.AwaitingHuman && len(owed) > 0:
			t.Fatalf("the person's turn with %v owed", owed)
		case a.Status != ask.Closed && ps.AllResolved():
			t.Fatal("every point resolved, and still open")
		}
	}
}

// checkJSON holds the ask to surviving its JSON, as a store keeps it: what is read back writes the
// same and obeys the same rules, and the contract accepts it. Every turn stays in the thread, so
// checking the last state of an input checks what every step wrote.
func checkJSON(t *testing.T, a *ask.Ask) {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back ask.Ask
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	b2, err := json.Marshal(back)
	if err != nil || !bytes.Equal(b, b2) {
		t.Fatalf("JSON changed on a round trip (%v):\n%s\n%s", err, b, b2)
	}
	if err := ask.CheckInvariants(&back); err != nil || back.Status != a.Status {
		t.Fatalf("read back as %s: %v", back.Status, err)
	}
	if err := contract.ValidateModel("Ask", b); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

// checkPointIDs holds every point id to being unique, numbered straight through at the top level,
// and numbered beneath the point its answer split, at most three levels deep.
func checkPointIDs(t *testing.T, a *ask.Ask) {
	t.Helper()
	seen := map[string]bool{}
	n := 0
	for _, s := range a.Briefing.Sections {
		for _, p := range s.Points {
			n++
			if p.ID != strconv.Itoa(n) || seen[p.ID] {
				t.Fatalf("top-level point %q, want %d", p.ID, n)
			}
			seen[p.ID] = true
		}
	}
	children := map[string]int{}
	for _, e := range a.Thread {
		for _, p := range e.Points {
			children[e.Point]++
			want := e.Point + "." + strconv.Itoa(children[e.Point])
			if p.ID != want || seen[p.ID] || !seen[e.Point] || strings.Count(p.ID, ".") >= ask.MaxPointDepth {
				t.Fatalf("sub-point %q of %q, want %q, new, at most %d deep", p.ID, e.Point, want, ask.MaxPointDepth)
			}
			seen[p.ID] = true
		}
	}
	if ps := ask.BriefingPoints(a); len(ps.Order) != len(seen) || len(ps.ByID) != len(seen) {
		t.Fatalf("%d points made, %d known", len(seen), len(ps.ByID))
	}
}

// FuzzReplyJSON: any bytes decoded as a Reply never panic, and a reply that decodes writes JSON the
// contract accepts, which decodes to the same reply and writes the same JSON again.
func FuzzReplyJSON(f *testing.F) {
	for _, seed := range []string{
		`{"outcome":"answered","selected":["A","B"],"text":"t"}`,
		`{"outcome":"approved","note":"n"}`,
		`{"outcome":"changes_requested","feedback":"f"}`,
		`{"outcome":"follow_up","question":"q"}`,
		`{"outcome":"dismissed"}`,
		`{"outcome":"responded","points":[{"point":"1","text":"t","resolved":true}]}`,
		`{"outcome":"approved","feedback":"x"}`,
		`{"outcome":"answered","selected":null}`,
		`null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r ask.Reply
		if err := json.Unmarshal(data, &r); err != nil {
			return
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("encode %+v: %v", r, err)
		}
		if err := contract.ValidateModel("Reply", b); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		var back ask.Reply
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("round trip changed %+v into %+v", r, back)
		}
		if b2, err := json.Marshal(back); err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("JSON changed on a round trip: %s, %s", b, b2)
		}
	})
}
