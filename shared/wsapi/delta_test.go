package wsapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestConnectWithWatermark: $connect takes the client's watermark from the handshake's query
// string (as API Gateway passes it, and only to $connect), and the greeting is then a delta: only
// the asks that changed since, marked with since. A malformed watermark is refused with 400
// request.invalid (API Gateway refuses the handshake), never a 500; none gets the whole snapshot.
func TestConnectWithWatermark(t *testing.T) {
	s, store, p := setup(t)
	ctx := context.Background()
	const space = "sp_delta"
	c := &clock{t: ask.Truncate(time.Now().Add(-time.Hour))}
	s.Service.Now = c.now
	_, err := s.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Old?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	answered, err := s.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Answer me?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	watermark := ask.FormatTime(c.now().Add(5 * time.Minute)) // the client held asks up to then
	c.add(10 * time.Minute)
	if _, err := s.Service.Reply(ctx, space, answered.ID, ask.Reply{Outcome: ask.OutcomeDismissed}, nil); err != nil {
		t.Fatal(err)
	}
	fresh, err := s.Service.AskQuestion(ctx, ask.QuestionInput{Question: "New?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	ada := ask.Actor{ID: "ada", Name: "ada"}
	token, _, err := gate.Issue(ctx, store, ask.Credential{Space: space, Role: ask.RolePerson, Actor: ada, Person: ada})
	if err != nil {
		t.Fatal(err)
	}
	handshake := func(id string, query map[string]string) events.APIGatewayProxyResponse {
		t.Helper()
		res, err := s.Connect(ctx, events.APIGatewayWebsocketProxyRequest{
			Headers:               map[string]string{"Sec-WebSocket-Protocol": "loopback.v1", "Authorization": "Bearer " + token},
			QueryStringParameters: query,
			RequestContext:        events.APIGatewayWebsocketProxyRequestContext{ConnectionID: id, RouteKey: "$connect"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, bad := range []string{"soon", "2026-02-30T00:00:00Z"} {
		res := handshake("conn-bad=", map[string]string{"since": bad})
		var prob struct{ Code string }
		json.Unmarshal([]byte(res.Body), &prob)
		if res.StatusCode != http.StatusBadRequest || prob.Code != ask.ERequestInvalid {
			t.Errorf("since=%q: %d %s; want 400 %s", bad, res.StatusCode, res.Body, ask.ERequestInvalid)
		}
	}
	if res := handshake("conn-delta=", map[string]string{"since": watermark}); res.StatusCode != http.StatusOK {
		t.Fatalf("$connect with a watermark: %d %s", res.StatusCode, res.Body)
	}
	if res := handshake("conn-whole=", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("$connect: %d %s", res.StatusCode, res.Body)
	}
	for _, id := range []string{"conn-delta=", "conn-whole="} {
		conn, err := store.FindConnection(ctx, id, c.now())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Greet(ctx, conn); err != nil {
			t.Fatal(err)
		}
	}
	got := p.got(t, "conn-delta=")
	if len(got) != 1 || got[0].Since == nil {
		t.Fatalf("greeting with a watermark: %+v; want one snapshot frame, a delta", got)
	}
	snap := got[0].Snapshot
	if len(snap.Open) != 1 || snap.Open[0].ID != fresh.ID || len(snap.Recent) != 1 || snap.Recent[0].ID != answered.ID {
		t.Errorf("the delta holds open %v, recent %v; want only the new ask and the dismissed one", snap.Open, snap.Recent)
	}
	whole := p.got(t, "conn-whole=")
	if len(whole) != 1 || whole[0].Since != nil || len(whole[0].Snapshot.Open) != 2 || len(whole[0].Snapshot.Recent) != 1 {
		t.Errorf("greeting without a watermark: %+v; want the whole snapshot", whole)
	}
}
