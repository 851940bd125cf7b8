package awslocal_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/events"
)

// TestMarksLive (contract revision 7): on the AWS path, a person's mark (PUT
// /api/v1/asks/{id}/mark) reaches that person's open event sockets through the table's stream
// (template.yaml's filter passes mark items) and the fan-out, as a "mark.updated" frame, and no
// other person's socket in the space.
func TestMarksLive(t *testing.T) {
	ctx := context.Background()
	_, base, table := startDeployment(t, "markslive", awslocal.Options{})
	store := dynamo.New(moto.DynamoDB(), table)
	ada, _, err := awsrt.Bootstrap(ctx, store, "sp_marks", "ada")
	if err != nil {
		t.Fatal(err)
	}
	grace, _, err := awsrt.AddPerson(ctx, store, "sp_marks", "Grace")
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, token, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	wait, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	open := func(token string) *websocket.Conn { return openSocket(t, wait, base, token) }
	next := func(name string, conn *websocket.Conn, typ string) events.ServerEvent {
		t.Helper()
		return nextFrame(t, wait, name, conn, typ)
	}
	conns := map[string]*websocket.Conn{"laptop": open(ada), "phone": open(ada), "grace": open(grace)}
	for name, c := range conns {
		next(name, c, events.TypeSnapshot)
	}
	// An ask to mark (the example ask); once each socket has it, each is ready.
	status, body := call("POST", "/api/v1/examples", ada, "")
	if status != 201 {
		t.Fatalf("POST /api/v1/examples = %d %s", status, body)
	}
	var a struct{ ID string }
	json.Unmarshal([]byte(body), &a)
	for name, c := range conns {
		if e := next(name, c, events.TypeAskOpened); e.Ask.ID != a.ID {
			t.Fatalf("%s: ask.opened of %s, want %s", name, e.Ask.ID, a.ID)
		}
	}

	// Ada snoozes it: both of her sockets hear it.
	if status, body := call("PUT", "/api/v1/asks/"+a.ID+"/mark", ada, `{"snooze":{"untilAgentMoves":true}}`); status != 200 {
		t.Fatalf("PUT mark = %d %s", status, body)
	}
	for _, name := range []string{"laptop", "phone"} {
		e := next(name, conns[name], events.TypeMarkUpdated)
		if e.Mark.AskID != a.ID || e.Mark.Snooze == nil || !e.Mark.Snooze.UntilAgentMoves {
			t.Fatalf("%s: %+v, want Ada's snooze", name, e.Mark)
		}
	}
	// Grace reads it: the first mark her socket hears is her own (no snooze), never Ada's.
	if status, body := call("PUT", "/api/v1/asks/"+a.ID+"/mark", grace, `{"read":true}`); status != 200 {
		t.Fatalf("PUT mark = %d %s", status, body)
	}
	if e := next("grace", conns["grace"], events.TypeMarkUpdated); e.Mark.Snooze != nil || e.Mark.ReadAt == nil {
		t.Fatalf("grace: %+v, want her own read mark (Ada's snooze is not hers)", e.Mark)
	}
	// And Ada's sockets never hear Grace's: the next mark they hear is Ada's own unread.
	if status, body := call("PUT", "/api/v1/asks/"+a.ID+"/mark", ada, `{"read":false}`); status != 200 {
		t.Fatalf("PUT mark = %d %s", status, body)
	}
	for _, name := range []string{"laptop", "phone"} {
		if e := next(name, conns[name], events.TypeMarkUpdated); e.Mark.ReadAt != nil || e.Mark.Snooze == nil {
			t.Fatalf("%s: %+v, want Ada's own unread mark, snooze kept (Grace's read is not hers)", name, e.Mark)
		}
	}
}
