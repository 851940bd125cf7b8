package mcptools_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
)

// TestToolInternalErrorLogged: a tool whose store fails tells the agent only that something went
// wrong and "It has been logged" — and it has: the cause is on one ERROR line of the injected
// logger, once, not in the result.
func TestToolInternalErrorLogged(t *testing.T) {
	var log syncBuffer
	d := newTestDeployment(t, deployOpts{Log: &log})

	// The store fails every new ask, for a reason only the log may name: a trigger on the real file.
	db, err := sql.Open("sqlite", d.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const cause = "disk-on-fire-7f3a"
	if _, err := db.ExecContext(context.Background(),
		`CREATE TRIGGER fail_asks BEFORE INSERT ON asks BEGIN SELECT RAISE(ABORT, '`+cause+`'); END`); err != nil {
		t.Fatalf("adding the trigger: %v", err)
	}

	c := d.connect(t, clientOpts{Legacy: true})
	text := toolErr(t, callTool(t, c, "ask_question", question("broken")))
	if want := "internal: Something went wrong on our side. It has been logged."; text != want {
		t.Fatalf("tool error %q, want %q", text, want)
	}
	if strings.Contains(text, cause) {
		t.Fatalf("the result names the cause: %q", text)
	}

	all, _ := log.lines(t)
	var logged []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(all), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a log line that is not JSON: %q", l)
		}
		if m["level"] == "ERROR" && strings.Contains(l, cause) {
			logged = append(logged, m)
		}
	}
	if len(logged) != 1 {
		t.Fatalf("the cause is on %d ERROR lines, want 1; the log:\n%s", len(logged), all)
	}
}

// TestAnsweringToolInternalErrorLogged: a tool that answers at once (list_open_asks) goes through
// the same wrapper: the agent reads only that it has been logged, and the cause is on one ERROR
// line.
func TestAnsweringToolInternalErrorLogged(t *testing.T) {
	var log syncBuffer
	d := newTestDeployment(t, deployOpts{Log: &log})
	db, err := sql.Open("sqlite", d.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The store cannot read the asks any more, for a reason only the log may name.
	if _, err := db.ExecContext(context.Background(), `ALTER TABLE asks RENAME TO asks_gone_7f3a`); err != nil {
		t.Fatalf("renaming the table: %v", err)
	}

	c := d.connect(t, clientOpts{Legacy: true})
	text := toolErr(t, callTool(t, c, "list_open_asks", map[string]any{}))
	if want := "internal: Something went wrong on our side. It has been logged."; text != want {
		t.Fatalf("tool error %q, want %q", text, want)
	}
	all, _ := log.lines(t)
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(all), "\n") {
		if strings.Contains(l, `"level":"ERROR"`) && strings.Contains(l, "no such table") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the cause is on %d ERROR lines, want 1; the log:\n%s", n, all)
	}
}
