package httpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/events/eventstest"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// answerOf reads frames until the answer to a request (an "ask.replied" or "request.failed"),
// passing over the changes the socket sends meanwhile.
func answerOf(t *testing.T, conn *websocket.Conn) events.ServerEvent {
	t.Helper()
	for {
		e := eventstest.MustNext(t, conn)
		if e.Type == events.TypeReplied || e.Type == events.TypeRequestFailed {
			return e
		}
	}
}

func send(t *testing.T, conn *websocket.Conn, kind websocket.MessageType, frame string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := conn.Write(ctx, kind, []byte(frame)); err != nil {
		t.Fatal(err)
	}
}

// A person's reply sent on the event socket (contract revision 8) is made as POST …/reply makes
// it: committed, heard by the ask's hearers, answered on the socket with the ask; and every frame
// the HTTP route would refuse is answered with the same Problem, on a socket that stays open.
func TestSocketReplies(t *testing.T) {
	ctx := context.Background()
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	q, err := s.svc.AskQuestion(ctx, ask.QuestionInput{Question: "Ship it?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}, Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	conn := dial(t, s, eventstest.Options{})
	eventstest.MustNext(t, conn) // the snapshot

	long := strings.Repeat("r", events.MaxRefChars+1)
	cases := []struct {
		name    string
		kind    websocket.MessageType
		frame   string
		code    string // "" for a reply committed
		wantRef string
	}{
		{"not JSON", websocket.MessageText, `hello`, ask.ERequestInvalid, ""},
		{"a binary frame", websocket.MessageBinary, `{"type":"ask.reply","ref":"b"}`, ask.ERequestInvalid, ""},
		{"an unknown type", websocket.MessageText, `{"type":"ask.dismiss","ref":"u","askId":"` + q.ID + `"}`, ask.ERequestInvalid, "u"},
		{"no ref", websocket.MessageText, `{"type":"ask.reply","askId":"` + q.ID + `","reply":{"outcome":"answered","selected":[],"text":"x"}}`, ask.ERequestInvalid, ""},
		{"a ref too long", websocket.MessageText, `{"type":"ask.reply","ref":"` + long + `","askId":"` + q.ID + `","reply":{"outcome":"answered","selected":[],"text":"x"}}`, ask.ERequestInvalid, ""},
		{"a ref not a string", websocket.MessageText, `{"type":"ask.reply","ref":7,"askId":"` + q.ID + `","reply":{"outcome":"answered","selected":[],"text":"x"}}`, ask.ERequestInvalid, ""},
		{"no askId", websocket.MessageText, `{"type":"ask.reply","ref":"n","reply":{"outcome":"answered","selected":[],"text":"x"}}`, ask.ERequestInvalid, "n"},
		{"no reply", websocket.MessageText, `{"type":"ask.reply","ref":"r","askId":"` + q.ID + `"}`, ask.EReplyInvalid, "r"},
		{"a reply not an object", websocket.MessageText, `{"type":"ask.reply","ref":"o","askId":"` + q.ID + `","reply":5}`, ask.EReplyInvalid, "o"},
		{"a reply that does not fit", websocket.MessageText, `{"type":"ask.reply","ref":"f","askId":"` + q.ID + `","reply":{"outcome":"approved"}}`, ask.EReplyInvalid, "f"},
		{"a choice not offered", websocket.MessageText, `{"type":"ask.reply","ref":"c","askId":"` + q.ID + `","reply":{"outcome":"answered","selected":["Maybe"],"text":""}}`, ask.EReplyInvalid, "c"},
		{"no such ask", websocket.MessageText, `{"type":"ask.reply","ref":"x","askId":"nope","reply":{"outcome":"answered","selected":[],"text":"x"}}`, ask.ENotFound, "x"},
		{"the reply", websocket.MessageText, `{"type":"ask.reply","ref":"ok-1","askId":"` + q.ID + `","reply":{"outcome":"answered","selected":["Yes"],"text":"go"}}`, "", "ok-1"},
		{"the same reply again", websocket.MessageText, `{"type":"ask.reply","ref":"again","askId":"` + q.ID + `","reply":{"outcome":"answered","selected":["Yes"],"text":"go"}}`, ask.EClosed, "again"},
	}
	for _, c := range cases {
		send(t, conn, c.kind, c.frame)
		e := answerOf(t, conn)
		if e.Ref != c.wantRef {
			t.Errorf("%s: ref %q, want %q", c.name, e.Ref, c.wantRef)
		}
		if c.code == "" {
			if e.Type != events.TypeReplied || e.Ask == nil || e.Ask.ID != q.ID || e.Ask.Status != ask.Closed {
				t.Errorf("%s: %+v, want the ask replied and closed", c.name, e)
			}
			continue
		}
		if e.Type != events.TypeRequestFailed || e.Problem == nil || e.Problem.Code != c.code || e.Problem.Message == "" || e.Status != httpapi.StatusOf(c.code) {
			t.Errorf("%s: %+v (problem %+v), want request.failed %s", c.name, e, e.Problem, c.code)
		}
	}
	// What the socket's reply committed is what the store holds, as the HTTP route would leave it.
	got, err := s.svc.Find(ctx, space, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if last := got.Thread[len(got.Thread)-1]; got.Status != ask.Closed || last.Reply == nil || last.Reply.Text != "go" || last.Via != ask.SurfaceInbox {
		t.Errorf("stored: %s, last turn %+v", got.Status, last)
	}
}

// The socket's reply and the ask's change both reach the person's socket, and every other socket
// of the space hears the change as for any reply.
func TestSocketReplyIsHeard(t *testing.T) {
	ctx := context.Background()
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	q, err := s.svc.AskQuestion(ctx, ask.QuestionInput{Question: "Ship it?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	mine, other := dial(t, s, eventstest.Options{}), dial(t, s, eventstest.Options{})
	eventstest.MustNext(t, mine)
	eventstest.MustNext(t, other)
	send(t, mine, websocket.MessageText, `{"type":"ask.reply","ref":"1","askId":"`+q.ID+`","reply":{"outcome":"answered","selected":[],"text":"yes"}}`)
	var replied, updated bool
	for !replied || !updated {
		e := eventstest.MustNext(t, mine)
		switch {
		case e.Type == events.TypeReplied && e.Ref == "1":
			replied = true
		case e.Type == events.TypeAskUpdated && e.Ask.ID == q.ID && e.Ask.Status == ask.Closed:
			updated = true
		default:
			t.Fatalf("unexpected frame %+v", e)
		}
	}
	if e := eventstest.MustNext(t, other); e.Type != events.TypeAskUpdated || e.Ask.Status != ask.Closed {
		t.Errorf("the other socket heard %+v", e)
	}
}

// A frame over what API Gateway carries ends the socket with 1009, as it does on AWS.
func TestSocketFrameTooLarge(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	conn := dial(t, s, eventstest.Options{})
	eventstest.MustNext(t, conn)
	conn.SetReadLimit(1 << 20)
	send(t, conn, websocket.MessageText, `{"type":"ask.reply","ref":"big","askId":"a","reply":{"outcome":"answered","selected":[],"text":"`+strings.Repeat("x", events.MaxClientFrame)+`"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err := conn.Read(ctx)
	if st := websocket.CloseStatus(err); st != websocket.StatusMessageTooBig {
		t.Fatalf("the socket ended with %v (status %d), want 1009", err, st)
	}
}

// Who may reply on a socket, as a matrix: the owner and a teammate may; an agent's credential
// never (it cannot open a socket, and a frame answered for it is refused all the same); a
// credential revoked after its socket opened replies no more.
func TestSocketReplyRoles(t *testing.T) {
	ctx := context.Background()
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	creds := s.api.Gate.Credentials
	issue := func(role ask.Role, actor ask.Actor) *ask.Credential {
		person := actor
		if role == ask.RoleAgent {
			person = ask.Actor{ID: "owner"} // an agent's credential belongs to the person who made it
		}
		_, c, err := gate.Issue(ctx, creds, ask.Credential{Space: space, Role: role, Actor: actor, Person: person})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	teammate := issue(ask.RolePerson, ask.Actor{ID: "sam"})
	agent := issue(ask.RoleAgent, ask.Actor{ID: "claude"})
	revoked := issue(ask.RoleOwner, ask.Actor{ID: "owner"})
	if err := creds.RevokeCredential(ctx, space, revoked.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	owner, err := s.api.Gate.Check(ctx, s.token)
	if err != nil {
		t.Fatal(err)
	}
	replies := httpapi.SocketReplies{Service: s.svc, Gate: s.api.Gate}
	for _, c := range []struct {
		who  string
		cred *ask.Credential
		code string
	}{
		{"the owner", owner, ""},
		{"a teammate", teammate, ""},
		{"an agent", agent, ask.EForbidden},
		{"a revoked credential", revoked, ask.EUnauthorized},
		{"no credential", &ask.Credential{ID: "gone"}, ask.EUnauthorized},
	} {
		q, err := s.svc.AskQuestion(ctx, ask.QuestionInput{Question: "Go?", Project: "p"}, ask.Origin{Space: space})
		if err != nil {
			t.Fatal(err)
		}
		frame := `{"type":"ask.reply","ref":"r","askId":"` + q.ID + `","reply":{"outcome":"answered","selected":[],"text":"yes"}}`
		out, err := replies.Answer(ctx, space, c.cred.ID, true, []byte(frame))
		var e events.ServerEvent
		if jerr := json.Unmarshal(out, &e); jerr != nil {
			t.Fatalf("%s: %v: %s", c.who, jerr, out)
		}
		after, ferr := s.svc.Find(ctx, space, q.ID)
		if ferr != nil {
			t.Fatal(ferr)
		}
		if c.code == "" {
			if err != nil || e.Type != events.TypeReplied || after.Status != ask.Closed {
				t.Errorf("%s: %v %+v, the ask %s", c.who, err, e, after.Status)
			}
			if by := after.Thread[len(after.Thread)-1].By; by == nil || by.ID != c.cred.Person.ID {
				t.Errorf("%s: replied by %+v, want %s", c.who, by, c.cred.Person.ID)
			}
			continue
		}
		if ask.ErrorCode(err) != c.code || e.Type != events.TypeRequestFailed || e.Problem.Code != c.code || after.Status == ask.Closed {
			t.Errorf("%s: %v %+v, the ask %s; want %s and the ask open", c.who, err, e, after.Status, c.code)
		}
	}
}
