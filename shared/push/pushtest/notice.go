package pushtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
)

// A Loopback notice as the service worker reads it from a push's payload
// (PushNotice in spec/main.tsp), so that tests can see what a device would
// show and which answers its buttons give, without a browser.

// Notice is a decrypted payload read as a Loopback PushNotice.
type Notice struct {
	AskID    string    `json:"askId"`
	Title    string    `json:"title"`
	Body     string    `json:"body"`
	Tag      string    `json:"tag"`
	URL      string    `json:"url"`
	Project  string    `json:"project,omitempty"`
	Group    string    `json:"group,omitempty"`
	Actions  []Action  `json:"actions,omitempty"`
	Answered *Answered `json:"answered,omitempty"`
	Closed   bool      `json:"closed,omitempty"`
}

// Action is one button of a notice: the link the service worker POSTs.
type Action struct {
	Action string `json:"action"`
	Title  string `json:"title"`
	URL    string `json:"url"`
}

// Answered is who answered an ask, where and when.
type Answered struct {
	By  string `json:"by,omitempty"`
	Via string `json:"via"`
	At  string `json:"at"`
}

// actionPath is what the service worker accepts as an action link (web/src/sw/policy.ts,
// isActionPath): anything else it drops, so a notice naming it is a fault here too.
var actionPath = regexp.MustCompile(`^/api/v1/actions/[A-Za-z0-9._~-]+$`)

// maxActions is how many buttons Chromium shows (Notification.maxActions).
const maxActions = 2

// Notice reads m's payload as a Loopback notice: it fails on fields a
// notice does not have, and on buttons a device would not show or could not
// use (more than two, without an id or words, or whose link the service
// worker would refuse to POST).
func (m Message) Notice() (Notice, error) {
	var n Notice
	dec := json.NewDecoder(bytes.NewReader(m.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		return n, fmt.Errorf("pushtest: the payload is not a notice: %w: %s", err, m.Payload)
	}
	if n.AskID == "" || n.Title == "" || n.Tag == "" || n.URL == "" {
		return n, fmt.Errorf("pushtest: a notice without askId, title, tag or url: %s", m.Payload)
	}
	if len(n.Actions) > maxActions {
		return n, fmt.Errorf("pushtest: %d actions, more than a device shows (%d)", len(n.Actions), maxActions)
	}
	seen := map[string]bool{}
	for _, a := range n.Actions {
		if a.Action == "" || a.Title == "" || seen[a.Action] || !actionPath.MatchString(a.URL) || len(a.URL) > len("/api/v1/actions/")+4096 {
			return n, fmt.Errorf("pushtest: an action a device cannot use: %+v", a)
		}
		seen[a.Action] = true
	}
	return n, nil
}
