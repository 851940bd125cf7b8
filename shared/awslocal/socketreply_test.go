package awslocal_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/events"
)

// TestSocketRepliesOnAWS (contract revision 8): on the AWS path a person's reply sent on the event
// socket goes to the $default function, which makes it as the HTTP route would and answers in its
// response (the route is two-way), with no @connections call; the change reaches the space's
// other sockets through the stream. A teammate's reply counts as theirs; a refused frame is
// answered and the socket stays open; a revoked credential's socket is told why and closed. And
// the functions keep to their policies in template.yaml.
func TestSocketRepliesOnAWS(t *testing.T) {
	ctx := context.Background()
	d, base, table := startDeployment(t, "socketreply", awslocal.Options{})
	store := dynamo.New(moto.DynamoDB(), table)
	const space = "sp_replies"
	ada, adaCred, err := awsrt.Bootstrap(ctx, store, space, "ada")
	if err != nil {
		t.Fatal(err)
	}
	grace, _, err := awsrt.AddPerson(ctx, store, space, "Grace")
	if err != nil {
		t.Fatal(err)
	}
	svc := ask.NewService(store)
	wait, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	open := func(token string) *websocket.Conn { return openSocket(t, wait, base, token) }
	next := func(name string, conn *websocket.Conn, typ string) events.ServerEvent {
		t.Helper()
		return nextFrame(t, wait, name, conn, typ)
	}
	send := func(conn *websocket.Conn, kind websocket.MessageType, frame string) {
		t.Helper()
		if err := conn.Write(wait, kind, []byte(frame)); err != nil {
			t.Fatal(err)
		}
	}
	reply := func(ref, id, text string) string {
		return `{"type":"ask.reply","ref":"` + ref + `","askId":"` + id + `","reply":{"outcome":"answered","selected":[],"text":"` + text + `"}}`
	}
	laptop, phone, teammate := open(ada), open(ada), open(grace)
	for name, c := range map[string]*websocket.Conn{"laptop": laptop, "phone": phone, "grace": teammate} {
		next(name, c, events.TypeSnapshot)
	}
	newAsk := func() *ask.Ask {
		t.Helper()
		q, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "Deploy?", Project: "p"}, ask.Origin{Space: space})
		if err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]*websocket.Conn{"laptop": laptop, "phone": phone, "grace": teammate} {
			if e := next(name, c, events.TypeAskOpened); e.Ask.ID != q.ID {
				t.Fatalf("%s: ask.opened of %s, want %s", name, e.Ask.ID, q.ID)
			}
		}
		return q
	}

	// Refused frames: answered, the socket open.
	send(laptop, websocket.MessageText, `{"type":"hello","ref":"h"}`)
	if e := next("laptop", laptop, events.TypeRequestFailed); e.Ref != "h" || e.Problem.Code != ask.ERequestInvalid {
		t.Fatalf("an unknown frame: %+v %+v", e, e.Problem)
	}
	send(laptop, websocket.MessageBinary, reply("b", "x", "y"))
	if e := next("laptop", laptop, events.TypeRequestFailed); e.Problem.Code != ask.ERequestInvalid || !strings.Contains(e.Problem.Message, "text frame") {
		t.Fatalf("a binary frame: %+v %+v", e, e.Problem)
	}

	// The reply: answered on the laptop; the change reaches the phone and Grace by the stream.
	q := newAsk()
	send(laptop, websocket.MessageText, reply("r1", q.ID, "ship it"))
	if e := next("laptop", laptop, events.TypeReplied); e.Ref != "r1" || e.Ask.ID != q.ID || e.Ask.Status != ask.Closed {
		t.Fatalf("the reply's answer: %+v", e)
	}
	for name, c := range map[string]*websocket.Conn{"phone": phone, "grace": teammate} {
		if e := next(name, c, events.TypeAskUpdated); e.Ask.ID != q.ID || e.Ask.Status != ask.Closed {
			t.Fatalf("%s heard %+v", name, e)
		}
	}
	// Grace, too late: the HTTP route's 409, as a frame.
	send(teammate, websocket.MessageText, reply("late", q.ID, "me too"))
	if e := next("grace", teammate, events.TypeRequestFailed); e.Ref != "late" || e.Problem.Code != ask.EClosed {
		t.Fatalf("a second reply: %+v %+v", e, e.Problem)
	}
	// A teammate's reply is theirs.
	q2 := newAsk()
	send(teammate, websocket.MessageText, reply("g", q2.ID, "fine"))
	next("grace", teammate, events.TypeReplied)
	stored, err := svc.Find(ctx, space, q2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if by := stored.Thread[len(stored.Thread)-1].By; by == nil || by.Name != "Grace" {
		t.Errorf("the teammate's reply was recorded as %+v", by)
	}

	// Every answer so far came back in $default's response (a route response): its function
	// made no @connections call.
	if fn := defaultFunction(t); slices.Contains(d.Calls[fn].Used(), "execute-api:ManageConnections") {
		t.Errorf("%s called @connections to answer frames; the answer goes in $default's response", fn)
	}

	// Ada's credential is revoked: her next frame is refused, and the socket closed.
	q3 := newAsk()
	if err := store.RevokeCredential(ctx, space, adaCred.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	send(laptop, websocket.MessageText, reply("after", q3.ID, "still me"))
	if e := next("laptop", laptop, events.TypeRequestFailed); e.Problem.Code != ask.EUnauthorized {
		t.Fatalf("a revoked credential's reply: %+v", e.Problem)
	}
	if _, _, err := laptop.Read(wait); err == nil {
		t.Error("a revoked credential's socket stayed open")
	}
	if stored, _ := svc.Find(ctx, space, q3.ID); stored.Status == ask.Closed {
		t.Error("a revoked credential's reply was made")
	}

	for id, calls := range d.Calls {
		if m := calls.Missing(); len(m) > 0 {
			t.Errorf("%s used %v, which template.yaml does not allow it", id, m)
		}
	}
}

// defaultFunction is the function template.yaml gives the WebSocket API's $default route.
func defaultFunction(t *testing.T) string {
	t.Helper()
	tmpl := loadTemplate(t)
	fn := tmpl.WebSocketRoutes["$default"]
	if fn == "" || !tmpl.WebSocketTwoWay["$default"] {
		t.Fatalf("template.yaml: $default is served by %q, two-way %v; want a function and a route response", fn, tmpl.WebSocketTwoWay["$default"])
	}
	return fn
}
