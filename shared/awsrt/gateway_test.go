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
// opens it), and a reply on the event socket's $default, answered through @connections. A
// $connect or $disconnect event, which have functions of their own, is refused.
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

	// The reply, a frame on the socket's $default; answered on the connection.
	d.connect(t, token, "gateway=")
	eventually(t, "the snapshot on gateway=", func() bool { return len(d.conns.received("gateway=")) == 1 })
	frame := `{"type":"ask.reply","ref":"r1","askId":"` + a.ID + `","reply":{"outcome":"answered","selected":[],"text":"ship it"}}`
	out, err = invoke(wsEvent("$default", "gateway=", nil, frame))
	if err != nil {
		t.Fatalf("$default through the gateway: %v", err)
	}
	var wsRes events.APIGatewayProxyResponse
	if err := json.Unmarshal(out, &wsRes); err != nil || wsRes.StatusCode != http.StatusOK {
		t.Fatalf("$default through the gateway = %s, %v; want statusCode 200", out, err)
	}
	eventually(t, "the answer on gateway=", func() bool {
		_, list := d.frames(t, "gateway=")
		for _, e := range list {
			if e.Type == lbevents.TypeReplied && e.Ref == "r1" {
				return true
			}
		}
		return false
	})
	got, err := d.rt.Store.FindAsk(ctx, space, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.Thread); n == 0 || got.Thread[n-1].Reply == nil || got.Thread[n-1].Reply.Text != "ship it" {
		t.Fatalf("the ask after the socket's reply: status %s, thread %+v; want the reply made", got.Status, got.Thread)
	}

	// The socket's other routes are not this function's.
	for _, route := range []string{"$connect", "$disconnect"} {
		if out, err := invoke(wsEvent(route, "gateway-other=", nil, "")); err == nil {
			t.Errorf("%s through the gateway = %s, want an error: it has a function of its own", route, out)
		}
	}
}
