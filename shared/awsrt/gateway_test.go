package awsrt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awslocal"
	lbevents "github.com/loopback-hq/loopback/shared/events"
)

// TestGateway drives functions/api's handler as lambda.Start drives it (aws-lambda-go's
// lambda.NewHandler: the event's JSON in, the response's JSON out) with the two kinds of event
// template.yaml sends ApiAsksReplyFunction: its HTTP API routes (the inbox marks an ask read as it
// opens it), and a reply on the event socket's $default, answered in its response (a route
// response sends it back on the connection). A $connect or $disconnect event, which have
// functions of their own, is refused.
func TestGateway(t *testing.T) {
	d := deploy(t)
	ctx := context.Background()
	const space = "sp_gateway"
	token := d.owner(t, space, "ada")
	h := lambda.NewHandler(d.rt.Gateway())
	invoke := func(event any) ([]byte, error) {
		t.Helper()
		return h.Invoke(ctx, mustJSON(t, event))
	}
	a, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Ship from the gateway?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}

	// The mark, an HTTP API request (payload 2.0).
	body := []byte(`{"read":true}`)
	r := httptest.NewRequest(http.MethodPut, "/api/v1/asks/"+a.ID+"/mark", bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Content-Type", "application/json")
	out, err := invoke(awslocal.APIRequest(r, body, "PUT /api/v1/asks/{id}/mark", map[string]string{"id": a.ID}, "api123"))
	if err != nil {
		t.Fatalf("PUT …/mark through the gateway: %v", err)
	}
	var res events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Body, `"readAt"`) {
		t.Fatalf("PUT …/mark through the gateway = %d %s, want 200 and the mark", res.StatusCode, res.Body)
	}

	// The reply, a frame on the socket's $default; answered in the response, which API Gateway
	// sends back on the connection (a route response), with no @connections call.
	d.connect(t, token, "gateway=")
	eventually(t, "the snapshot on gateway=", func() bool { return len(d.conns.received("gateway=")) == 1 })
	reply := func(id, ref, text string) string {
		return `{"type":"ask.reply","ref":"` + ref + `","askId":"` + id + `","reply":{"outcome":"answered","selected":[],"text":"` + text + `"}}`
	}
	out, err = invoke(wsEvent("$default", "gateway=", nil, reply(a.ID, "r1", "ship it")))
	if err != nil {
		t.Fatalf("$default through the gateway: %v", err)
	}
	var wsRes events.APIGatewayProxyResponse
	if err := json.Unmarshal(out, &wsRes); err != nil || wsRes.StatusCode != http.StatusOK {
		t.Fatalf("$default through the gateway = %s, %v; want statusCode 200", out, err)
	}
	if e := answerFrame(t, wsRes); e.Type != lbevents.TypeReplied || e.Ref != "r1" || e.Ask == nil || e.Ask.ID != a.ID {
		t.Fatalf("$default answered %+v, want ask.replied for r1", e)
	}
	if n := len(d.conns.received("gateway=")); n != 1 {
		t.Errorf("gateway= received %d frames through @connections, want only its snapshot", n)
	}
	replied := func(id, text string) {
		t.Helper()
		got, err := d.rt.Store.FindAsk(ctx, space, id)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(got.Thread); n == 0 || got.Thread[n-1].Reply == nil || got.Thread[n-1].Reply.Text != text {
			t.Fatalf("ask %s after the socket's reply: status %s, thread %+v; want the reply %q made", id, got.Status, got.Thread, text)
		}
	}
	replied(a.ID, "ship it")

	// An answer over API Gateway's 128 KB is not sent: the reply is made, the connection closed
	// (the inbox then reads the ask over HTTP), and the response has no body.
	big, err := d.rt.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Big?", Context: strings.Repeat("A long question. ", 8_000), Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	out, err = invoke(wsEvent("$default", "gateway=", nil, reply(big.ID, "r2", "yes")))
	if err != nil {
		t.Fatalf("$default through the gateway: %v", err)
	}
	wsRes = events.APIGatewayProxyResponse{}
	if err := json.Unmarshal(out, &wsRes); err != nil || wsRes.StatusCode != http.StatusOK || wsRes.Body != "" {
		t.Fatalf("$default for a large ask = %s, %v; want statusCode 200 and no body", out, err)
	}
	if !d.conns.wasClosed("gateway=") {
		t.Error("the connection whose answer did not fit was left open")
	}
	replied(big.ID, "yes")

	// The socket's other routes are not this function's.
	for _, route := range []string{"$connect", "$disconnect"} {
		if out, err := invoke(wsEvent(route, "gateway-other=", nil, "")); err == nil {
			t.Errorf("%s through the gateway = %s, want an error: it has a function of its own", route, out)
		}
	}
}
