package asktest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testTaskStore runs the conformance suite for ask.TaskStore.
func testTaskStore(t *testing.T, open func(t *testing.T) ask.TaskStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, ask.TaskStore)
	}{
		{"RoundTrip", testTaskRoundTrip},
		{"NotFound", testTaskNotFound},
		{"Duplicate", testTaskDuplicate},
		{"Expired", testTaskExpired},
		{"Finish", testTaskFinish},
		{"FinishFirstWins", testTaskFinishTwice},
		{"FinishUnknown", testTaskFinishUnknown},
		{"RacingFinishes", testTaskFinishRace},
		{"List", testTaskList},
		{"ListEmpty", testTaskListEmpty},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// newTask returns a working task of a space, created at created and kept for ttl.
func newTask(space, id string, created time.Time, ttl time.Duration) *ask.Task {
	return &ask.Task{
		ID: id, Space: space, CredentialID: "cred_" + ask.NewID()[:16], AskID: "ask_" + ask.NewID()[:12], Tool: "ask_question", Status: ask.TaskWorking,
		TTL: ttl, CreatedAt: created, UpdatedAt: created, ExpiresAt: created.Add(ttl),
	}
}

// cloneTask copies a task, Result included, so that what a test expects is kept apart from what
// it hands a store.
func cloneTask(tk *ask.Task) *ask.Task {
	c := *tk
	if tk.Result != nil {
		c.Result = slices.Clone(tk.Result)
	}
	return &c
}

func createTask(t *testing.T, s ask.TaskStore, ts ...*ask.Task) {
	t.Helper()
	for _, tk := range ts {
		if err := s.CreateTask(context.Background(), cloneTask(tk)); err != nil {
			t.Fatalf("CreateTask %s: %v", tk.ID, err)
		}
	}
}

func findTask(t *testing.T, s ask.TaskStore, space, id string, now time.Time) *ask.Task {
	t.Helper()
	tk, err := s.FindTask(context.Background(), space, id, now)
	if err != nil {
		t.Fatalf("FindTask %s at %s: %v", id, ask.FormatTime(now), err)
	}
	return tk
}

func finishTask(t *testing.T, s ask.TaskStore, tk *ask.Task) *ask.Task {
	t.Helper()
	got, err := s.FinishTask(context.Background(), cloneTask(tk))
	if err != nil {
		t.Fatalf("FinishTask %s as %s: %v", tk.ID, tk.Status, err)
	}
	return got
}

// finished returns tk moved to a terminal status at updated.
func finished(tk *ask.Task, status ask.TaskStatus, message, result string, updated time.Time) *ask.Task {
	c := cloneTask(tk)
	c.Status, c.Message, c.UpdatedAt = status, message, updated
	if result != "" {
		c.Result = []byte(result)
	}
	return c
}

func taskIDs(ts []*ask.Task) []string {
	out := []string{}
	for _, tk := range ts {
		out = append(out, tk.ID)
	}
	return out
}

const (
	resultYes = `{"content":[{"type":"text","text":"{\"outcome\":\"answered\",\"selected\":[\"Yes\"]}"}],` +
		`"structuredContent":{"outcome":"answered","selected":["Yes"],"text":"SQLite ✓ 日本"}}`
	resultError = `{"content":[{"type":"text","text":"ask.closed: the ask is closed"}],"isError":true}`
)

func testTaskRoundTrip(t *testing.T, s ask.TaskStore) {
	space, prefix := newSpace(), newPrefix()
	working := newTask(space, prefix+"working", base, 15*time.Minute)
	completed := finished(newTask(space, prefix+"completed", at(time.Second), 1500*time.Millisecond),
		ask.TaskCompleted, "", resultYes, at(2*time.Second))
	completed.Tool = "request_review"
	failed := finished(newTask(space, prefix+"failed", at(2*time.Second), 24*time.Hour),
		ask.TaskFailed, "the ask was closed underneath the call", resultError, at(3*time.Second+7*time.Microsecond))
	cancelled := finished(newTask(space, prefix+"cancelled", at(3*time.Second), time.Hour),
		ask.TaskCancelled, "cancelled by the client", "", at(4*time.Second))
	all := []*ask.Task{working, completed, failed, cancelled}
	createTask(t, s, all...)
	for _, want := range all {
		same(t, "FindTask "+want.ID, want, findTask(t, s, space, want.ID, at(time.Second)))
	}
	if got := findTask(t, s, space, working.ID, base); got.Terminal() || got.Result != nil || got.Message != "" {
		t.Fatalf("a working task came back terminal %v, with result %q, message %q", got.Terminal(), got.Result, got.Message)
	}
}

func testTaskNotFound(t *testing.T, s ask.TaskStore) {
	ctx := context.Background()
	space, other, prefix := newSpace(), newSpace(), newPrefix()
	tk := newTask(space, prefix+"task", base, time.Hour)
	createTask(t, s, tk)
	_, err := s.FindTask(ctx, space, prefix+"nope", base)
	wantRefusal(t, err, ask.TaskNotFound(prefix+"nope"), "FindTask of an unknown id")
	_, err = s.FindTask(ctx, other, tk.ID, base)
	wantRefusal(t, err, ask.TaskNotFound(tk.ID), "FindTask of another space's task")
	_, err = s.FindTask(ctx, space, prefix, base)
	wantCode(t, err, ask.ENotFound, "FindTask of a prefix of an id")

	// The same id in two spaces is two tasks.
	twin := newTask(other, tk.ID, at(time.Second), 2*time.Hour)
	twin.Tool = "request_briefing"
	createTask(t, s, twin)
	same(t, "the space's task, after another space made one with its id", tk, findTask(t, s, space, tk.ID, base))
	same(t, "the other space's task of the same id", twin, findTask(t, s, other, tk.ID, base))
}

// testTaskDuplicate: an id already stored in the space is refused with ask.ErrAlreadyStored, and
// the stored task is left as it was.
func testTaskDuplicate(t *testing.T, s ask.TaskStore) {
	space := newSpace()
	tk := newTask(space, newPrefix()+"task", base, time.Hour)
	createTask(t, s, tk)
	dup := newTask(space, tk.ID, at(time.Second), 2*time.Hour)
	dup.Tool = "request_review"
	wantSentinel(t, s.CreateTask(context.Background(), dup), ask.ErrAlreadyStored, "CreateTask of an id already stored")
	same(t, "the stored task after a refused duplicate", tk, findTask(t, s, space, tk.ID, base))
}

// testTaskExpired: a task is found while now is before its ExpiresAt, and not from then on.
func testTaskExpired(t *testing.T, s ask.TaskStore) {
	ctx := context.Background()
	space, prefix := newSpace(), newPrefix()
	tk := newTask(space, prefix+"task", base, time.Minute)
	done := finished(newTask(space, prefix+"done", base, time.Minute), ask.TaskCompleted, "", resultYes, at(time.Second))
	createTask(t, s, tk, done)
	for _, want := range []*ask.Task{tk, done} {
		same(t, "a task a microsecond before it expires", want,
			findTask(t, s, space, want.ID, want.ExpiresAt.Add(-time.Microsecond)))
		_, err := s.FindTask(ctx, space, want.ID, want.ExpiresAt)
		wantRefusal(t, err, ask.TaskNotFound(want.ID), "FindTask at ExpiresAt")
		_, err = s.FindTask(ctx, space, want.ID, want.ExpiresAt.Add(time.Hour))
		wantRefusal(t, err, ask.TaskNotFound(want.ID), "FindTask an hour after ExpiresAt")
	}
}

func testTaskFinish(t *testing.T, s ask.TaskStore) {
	space, prefix := newSpace(), newPrefix()
	for i, end := range []struct {
		status          ask.TaskStatus
		message, result string
	}{
		{ask.TaskCompleted, "", resultYes},
		{ask.TaskFailed, "the ask was closed", resultError},
		{ask.TaskCancelled, "cancelled by the client", ""},
	} {
		tk := newTask(space, fmt.Sprintf("%s%d", prefix, i), at(time.Duration(i)*time.Second), time.Hour)
		other := newTask(space, fmt.Sprintf("%s%d-other", prefix, i), at(time.Duration(i)*time.Second), time.Hour)
		createTask(t, s, tk, other)
		want := finished(tk, end.status, end.message, end.result, at(time.Minute+time.Duration(i)*time.Microsecond))
		got := finishTask(t, s, want)
		same(t, fmt.Sprintf("FinishTask as %s: the task it returns", end.status), want, got)
		if !got.Terminal() {
			t.Fatalf("FinishTask as %s: the task is not terminal", end.status)
		}
		same(t, fmt.Sprintf("FinishTask as %s: the stored task", end.status), want, findTask(t, s, space, tk.ID, at(2*time.Minute)))
		same(t, "another working task, after finishing one", other, findTask(t, s, space, other.ID, at(2*time.Minute)))
	}
}

// testTaskFinishTwice: once a task is terminal, FinishTask returns it as it is and changes nothing.
func testTaskFinishTwice(t *testing.T, s ask.TaskStore) {
	space := newSpace()
	tk := newTask(space, newPrefix()+"task", base, time.Hour)
	createTask(t, s, tk)
	first := finished(tk, ask.TaskCompleted, "", resultYes, at(time.Minute))
	same(t, "the first FinishTask", first, finishTask(t, s, first))
	for i, later := range []*ask.Task{
		finished(tk, ask.TaskFailed, "too late", resultError, at(2*time.Minute)),
		finished(tk, ask.TaskCancelled, "cancelled", "", at(3*time.Minute)),
		finished(tk, ask.TaskCompleted, "", `{"content":[],"isError":false}`, at(4*time.Minute)),
	} {
		same(t, fmt.Sprintf("FinishTask %d after the first", i+2), first, finishTask(t, s, later))
		same(t, fmt.Sprintf("the stored task after FinishTask %d", i+2), first, findTask(t, s, space, tk.ID, at(5*time.Minute)))
	}
}

func testTaskFinishUnknown(t *testing.T, s ask.TaskStore) {
	ctx := context.Background()
	space, other := newSpace(), newSpace()
	tk := newTask(space, newPrefix()+"task", base, time.Hour)
	createTask(t, s, tk)
	unknown := finished(tk, ask.TaskCompleted, "", resultYes, at(time.Minute))
	unknown.ID += "-nope"
	_, err := s.FinishTask(ctx, unknown)
	wantRefusal(t, err, ask.TaskNotFound(unknown.ID), "FinishTask of an unknown id")
	elsewhere := finished(tk, ask.TaskCompleted, "", resultYes, at(time.Minute))
	elsewhere.Space = other
	_, err = s.FinishTask(ctx, elsewhere)
	wantCode(t, err, ask.ENotFound, "FinishTask of a task of another space")
	same(t, "the task after FinishTask calls on other tasks", tk, findTask(t, s, space, tk.ID, base))
	if _, err := s.FindTask(ctx, other, tk.ID, base); ask.ErrorCode(err) != ask.ENotFound {
		t.Fatalf("FinishTask in another space made a task there: FindTask got %v", err)
	}
}

// testTaskFinishRace: of finishes that race, exactly one is stored, and every caller gets it back.
func testTaskFinishRace(t *testing.T, s ask.TaskStore) {
	const n = 8
	space, prefix := newSpace(), newPrefix()
	statuses := []ask.TaskStatus{ask.TaskCompleted, ask.TaskFailed, ask.TaskCancelled}
	for round := range 5 {
		tk := newTask(space, fmt.Sprintf("%s%d", prefix, round), base, time.Hour)
		createTask(t, s, tk)
		inputs := make([]*ask.Task, n)
		for i := range inputs {
			inputs[i] = finished(tk, statuses[i%len(statuses)], fmt.Sprintf("finish %d", i),
				fmt.Sprintf(`{"content":[{"type":"text","text":"finish %d"}]}`, i), at(time.Minute+time.Duration(i)*time.Microsecond))
		}
		var got [n]*ask.Task
		var errs [n]error
		race(n, func(i int) { got[i], errs[i] = s.FinishTask(context.Background(), cloneTask(inputs[i])) })
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: FinishTask %d: %v", round, i, err)
			}
		}
		stored := findTask(t, s, space, tk.ID, base)
		winners := 0
		for i := range n {
			same(t, fmt.Sprintf("round %d: what racing FinishTask %d returned, against the stored task", round, i), stored, got[i])
			if string(stored.Result) == string(inputs[i].Result) {
				winners++
				same(t, fmt.Sprintf("round %d: the stored task, against the finish that won", round), inputs[i], stored)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: the stored task matches %d of %d racing finishes, want exactly 1", round, winners, n)
		}
	}
}

// testTaskList: a space's unexpired tasks, newest first, each exactly once whatever the page size,
// ties in creation time included.
func testTaskList(t *testing.T, s ask.TaskStore) {
	space, other, prefix := newSpace(), newSpace(), newPrefix()
	now := at(10 * time.Minute)
	var tasks []*ask.Task
	add := func(space, name string, created time.Time, ttl time.Duration) *ask.Task {
		tk := newTask(space, prefix+name, created, ttl)
		tasks = append(tasks, tk)
		return tk
	}
	live := []*ask.Task{
		add(space, "t0", base, time.Hour),
		add(space, "t1", at(time.Second), time.Hour),
		add(space, "t2", at(time.Second), time.Hour), // t1, t2 and t3 were created together
		add(space, "t3", at(time.Second), time.Hour),
		add(space, "t4", at(2*time.Second), time.Hour),
		add(space, "t5", at(3*time.Second), 24*time.Hour),
		add(space, "t6", now.Add(-time.Minute), time.Minute+time.Millisecond), // expires a millisecond after now
	}
	add(space, "x0", at(4*time.Second), time.Second)         // long expired
	add(space, "x1", base.Add(-time.Hour), time.Hour)        // expired at base
	add(space, "x2", now.Add(-2*time.Minute), 2*time.Minute) // expires exactly at now
	add(other, "o0", at(time.Second), time.Hour)             // another space's
	add(other, "o1", at(5*time.Second), time.Hour)           // another space's
	add(other, "t2", at(time.Second), time.Hour)             // another space's, same id as one of ours
	slices.Reverse(tasks)                                    // stored oldest last
	createTask(t, s, tasks...)
	// The list shows tasks as they are stored now, finished or not.
	live[2] = finished(live[2], ask.TaskCompleted, "", resultYes, at(time.Minute))
	finishTask(t, s, live[2])

	want := map[string]*ask.Task{}
	for _, tk := range live {
		want[tk.ID] = tk
	}
	for _, limit := range []int{1, 2, 3, len(live), len(live) + 1, 100} {
		seen := checkTaskPages(t, s, space, limit, now, len(tasks)+2)
		if len(seen) != len(live) {
			t.Fatalf("limit %d: listed %v, want the %d unexpired tasks of the space once each", limit, taskIDs(seen), len(live))
		}
		for _, tk := range seen {
			w, ok := want[tk.ID]
			if !ok {
				t.Fatalf("limit %d: listed %s, which is expired or not the space's (listed %v)", limit, tk.ID, taskIDs(seen))
			}
			same(t, fmt.Sprintf("limit %d: the listed task %s", limit, tk.ID), w, tk)
		}
	}
	seen := checkTaskPages(t, s, other, 2, now, len(tasks)+2)
	got := taskIDs(seen)
	slices.Sort(got)
	same(t, "the tasks listed for the other space", []string{prefix + "o0", prefix + "o1", prefix + "t2"}, got)
	if seen[0].ID != prefix+"o1" {
		t.Fatalf("the other space's newest task is not listed first: %v", taskIDs(seen))
	}
	seen = checkTaskPages(t, s, space, 3, at(2*time.Hour), len(tasks)+2)
	same(t, "the space's tasks two hours on", []string{prefix + "t5"}, taskIDs(seen))
}

// checkTaskPages lists a space's tasks page by page, limit at a time, and returns them. It fails
// the test when a page is over the limit, a task shows up twice, the order is not newest first,
// or the pages do not end within maxPages.
func checkTaskPages(t *testing.T, s ask.TaskStore, space string, limit int, now time.Time, maxPages int) []*ask.Task {
	t.Helper()
	var seen []*ask.Task
	ids := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages == maxPages {
			t.Fatalf("limit %d: the pages of %s do not end after %d (listed %v)", limit, space, maxPages, taskIDs(seen))
		}
		page, next, err := s.ListTasks(context.Background(), space, cursor, limit, now)
		if err != nil {
			t.Fatalf("limit %d: ListTasks page %d: %v", limit, pages+1, err)
		}
		if len(page) > limit {
			t.Fatalf("limit %d: ListTasks page %d has %d tasks", limit, pages+1, len(page))
		}
		for _, tk := range page {
			if tk.Space != space {
				t.Fatalf("limit %d: %s of space %q listed for %q", limit, tk.ID, tk.Space, space)
			}
			if ids[tk.ID] {
				t.Fatalf("limit %d: %s listed twice (listed %v)", limit, tk.ID, taskIDs(append(seen, page...)))
			}
			if !now.Before(tk.ExpiresAt) {
				t.Fatalf("limit %d: %s listed at %s, though it expired at %s", limit, tk.ID, ask.FormatTime(now), ask.FormatTime(tk.ExpiresAt))
			}
			if n := len(seen); n > 0 && tk.CreatedAt.After(seen[n-1].CreatedAt) {
				t.Fatalf("limit %d: %s (created %s) listed after %s (created %s): not newest first", limit,
					tk.ID, ask.FormatTime(tk.CreatedAt), seen[n-1].ID, ask.FormatTime(seen[n-1].CreatedAt))
			}
			ids[tk.ID] = true
			seen = append(seen, tk)
		}
		if next == "" {
			return seen
		}
		if next == cursor {
			t.Fatalf("limit %d: ListTasks returned the cursor it was given (%q)", limit, cursor)
		}
		cursor = next
	}
}

func testTaskListEmpty(t *testing.T, s ask.TaskStore) {
	page, next, err := s.ListTasks(context.Background(), newSpace(), "", 10, base)
	if err != nil {
		t.Fatalf("ListTasks of an empty space: %v", err)
	}
	if len(page) != 0 || next != "" {
		t.Fatalf("ListTasks of an empty space: %v and cursor %q, want nothing and no cursor", taskIDs(page), next)
	}
}
