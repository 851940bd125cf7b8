package mcptools_test

import (
	"strings"
	"testing"
)

func TestExplore(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})
	q1 := question("p")
	q1["options"] = []map[string]any{{"label": "a"}}
	q2 := question("p")
	q2["options"] = []map[string]any{{"label": strings.Repeat("x", 81)}, {"label": "b"}}
	q3 := question("p")
	delete(q3, "project")
	q4 := question("p")
	q4["colour"] = "red"
	q5 := question("p")
	q5["options"] = "nope"
	for _, args := range []map[string]any{q1, q2, q3, q4, q5, briefing("p", 51)} {
		res := callTool(t, c, "ask_question", args)
		if _, ok := args["sections"]; ok {
			res = callTool(t, c, "send_briefing", args)
		}
		t.Logf("isError=%v %s", res.IsError, resultText(res))
	}
	res := callTool(t, c, "await_reply", map[string]any{"askId": "nope"})
	t.Logf("isError=%v %s", res.IsError, resultText(res))
	res = callTool(t, c, "await_reply", map[string]any{})
	t.Logf("isError=%v %s", res.IsError, resultText(res))
	t.Log(d.askCount(t))
}
