package contract

import "strings"

// Valid messages of the contract, to build test cases from.
const (
	questionAsk = `{
		"kind": "question",
		"id": "a1",
		"status": "awaiting_human",
		"waiting": true,
		"project": "loopback",
		"client": "claude-code 2.1.0",
		"raisedBy": {"id": "u1", "name": "Ada"},
		"thread": [],
		"createdAt": "2025-01-02T03:04:05Z",
		"updatedAt": "2025-01-02T03:04:05.123Z",
		"prompt": {
			"question": "Ship it?",
			"options": [{"label": "Yes"}, {"label": "No", "description": "Not yet"}],
			"multiple": false,
			"context": "The release is **green**."
		}
	}`

	reviewAsk = `{
		"kind": "review",
		"id": "a2",
		"status": "closed",
		"waiting": false,
		"revises": "a0",
		"thread": [
			{"author": "human", "reply": {"outcome": "approved", "note": "Nice"}, "by": {"id": "u1"}, "at": "2025-01-02T04:00:00Z"}
		],
		"createdAt": "2025-01-02T03:04:05Z",
		"updatedAt": "2025-01-02T04:00:00Z",
		"closedAt": "2025-01-02T04:00:00+01:00",
		"prompt": {
			"title": "New landing page",
			"content": [
				{"type": "markdown", "text": "# Hello"},
				{"type": "code", "code": "fmt.Println(1)", "language": "go", "filename": "main.go"},
				{"type": "diff", "diff": "--- a\n+++ b\n"},
				{"type": "image", "uploadId": "up1", "caption": "Hero"}
			],
			"summary": "Copy and layout"
		}
	}`

	briefingAsk = `{
		"kind": "briefing",
		"id": "a3",
		"status": "awaiting_agent",
		"waiting": false,
		"thread": [
			{"author": "human", "reply": {"outcome": "responded", "points": [{"point": "1", "text": "Why?"}, {"point": "2", "resolved": true}]}, "at": "2025-01-02T04:00:00Z"},
			{"author": "agent", "answer": "Because.", "point": "1", "points": [{"id": "1.1", "title": "Detail"}], "at": "2025-01-02T04:05:00Z"}
		],
		"createdAt": "2025-01-02T03:04:05Z",
		"updatedAt": "2025-01-02T04:05:00Z",
		"prompt": {
			"title": "Findings",
			"summary": "Two findings",
			"sections": [
				{"title": "Security", "points": [{"id": "1", "title": "Tokens are logged", "detail": "In debug mode", "content": [{"type": "markdown", "text": "x"}]}]},
				{"points": [{"id": "2", "title": "Old dependency"}]}
			]
		}
	}`
)

// with returns a JSON object with one top-level property replaced, added or (with value "") removed.
// It works on the fixtures above by text, so that a test case reads as the one change it makes.
func with(doc, prop, value string) string {
	v, err := decodeOrdered([]byte(doc))
	if err != nil {
		panic(err)
	}
	o := v.(*object)
	if value == "" {
		o.del(prop)
	} else {
		nv, err := decodeOrdered([]byte(value))
		if err != nil {
			panic(err)
		}
		o.set(prop, nv)
	}
	b, err := encodeOrdered(o)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func list(items ...string) string { return "[" + strings.Join(items, ",") + "]" }
