package ask

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Deadlines, defaults and escalation (contract revision 4). An agent may give an ask a deadline,
// and a default answer to take if nobody answers by then; a space may escalate an ask nobody
// answered for some minutes to the other people of the space. Both happen as notices in the
// ask's thread, written through ChangeAsk like any turn, so that a person's answer racing the
// deadline is judged against the ask as the winner left it: the first one wins.

// The notices of revision 4.
const (
	// NoticeDeadline closes an ask nobody answered by its deadline: the agent takes its default,
	// or is told that nobody answered.
	NoticeDeadline NoticeEvent = "deadline"
	// NoticeEscalated says that an ask nobody answered for the space's escalation time was also
	// sent to the other people of the space. It changes nothing else: the ask stays open.
	NoticeEscalated NoticeEvent = "escalated"
)

// Bounds of a deadline and of escalation (docs/limits.md).
const (
	// MinDeadline is the soonest a deadline may fall after the ask is made: time enough for a
	// person to be told at all.
	MinDeadline = 10 * time.Second
	// MaxDeadline is the latest a deadline may fall after the ask is made.
	MaxDeadline = 7 * 24 * time.Hour
	// MaxEscalateAfterMinutes bounds a space's escalation time (a week).
	MaxEscalateAfterMinutes = 7 * 24 * 60
	// MaxSlackChannelRunes bounds the Slack channel an escalation names.
	MaxSlackChannelRunes = 80
)

// DeadlineInput is the deadline an agent gives an ask: a time (At), or a number of seconds from
// now (InSeconds), which an agent gets right more often, since a model knows the current time
// poorly. Exactly one of the two. Default is the reply to take if nobody answers by then,
// checked as a person's reply to the ask would be when the ask is made.
type DeadlineInput struct {
	At        *time.Time `json:"at,omitempty"`
	InSeconds int64      `json:"inSeconds,omitempty"`
	Default   *Reply     `json:"default,omitempty"`
}

// Deadline is an ask's deadline as the person and the agent see it (the contract's
// AskDeadline): when it closes, and what it closes with, if nobody answers before.
type Deadline struct {
	At      time.Time
	Default *Reply
}

// MarshalJSON writes the contract's AskDeadline.
func (d Deadline) MarshalJSON() ([]byte, error) {
	o := newObject()
	o.time("at", d.At)
	if d.Default != nil {
		o.field("default", d.Default)
	}
	return o.bytes()
}

// UnmarshalJSON reads the contract's AskDeadline.
func (d *Deadline) UnmarshalJSON(data []byte) error {
	var w struct {
		At      string `json:"at"`
		Default *Reply `json:"default"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("ask.deadline: %s", typeMessage(err))
	}
	t, err := ParseTime(w.At)
	if err != nil {
		return fmt.Errorf("ask.deadline.at: %v", err)
	}
	*d = Deadline{At: t, Default: w.Default}
	return nil
}

// setDeadline gives a new ask the deadline in (nil: none), refusing one that does not fit: a
// time not between MinDeadline and MaxDeadline from now, both forms or neither, or a default the
// person could not have replied (it must close the ask: no follow_up, no briefing point left to
// the agent, no rule remembered).
func setDeadline(a *Ask, in *DeadlineInput, now time.Time) error {
	if in == nil {
		return nil
	}
	if a.Kind == KindApproval {
		return Errorf(EInputInvalid, "deadline: an approval takes no deadline; it ends when the agent stops waiting")
	}
	var at time.Time
	switch {
	case in.At != nil && in.InSeconds != 0:
		return Errorf(EInputInvalid, "deadline: give either at or inSeconds, not both")
	case in.At != nil:
		at = Truncate(*in.At)
	case in.InSeconds != 0:
		if in.InSeconds < int64(MinDeadline/time.Second) || in.InSeconds > int64(MaxDeadline/time.Second) {
			return Errorf(EInputInvalid, "deadline.inSeconds must be between %d and %d (a week); got %d",
				int64(MinDeadline/time.Second), int64(MaxDeadline/time.Second), in.InSeconds)
		}
		at = now.Add(time.Duration(in.InSeconds) * time.Second)
	default:
		return Errorf(EInputInvalid, "deadline needs at (a date-time) or inSeconds (seconds from now; it is %s now)", FormatTime(now))
	}
	if d := at.Sub(now); d < MinDeadline || d > MaxDeadline {
		return Errorf(EInputInvalid, "deadline.at must fall between %s and a week from now; it is %s now and deadline.at is %s. Prefer inSeconds: the number of seconds from now",
			MinDeadline, FormatTime(now), FormatTime(at))
	}
	dl := &Deadline{At: at}
	if in.Default != nil {
		r := *in.Default
		r.By = nil
		if r.Remember != nil {
			return Errorf(EInputInvalid, "deadline.default must not remember a rule: only a person makes rules")
		}
		if r.Outcome == OutcomeDismissed && a.Kind != KindBriefing {
			return Errorf(EInputInvalid, "deadline.default must be an answer to the %s, not dismissed: leave default out, and you are told that nobody answered", a.Kind)
		}
		trial := *a
		trial.Thread = nil
		if err := ApplyReplyVia(&trial, r, nil, SurfaceInbox, func() time.Time { return now }); err != nil {
			return Errorf(EInputInvalid, "deadline.default is not a reply the person could give to this %s: %s", a.Kind, ErrorMessage(err))
		}
		if trial.Status != Closed {
			return Errorf(EInputInvalid, "deadline.default must close the %s: give an answer (not %s)", a.Kind, r.Outcome)
		}
		dl.Default = &r
	}
	a.Deadline = dl
	return nil
}

// Escalation is a space's rule for asks nobody answers: after AfterMinutes (0: never), the ask is
// also sent to the other people of the space (ToPeople) and to a Slack channel (SlackChannel,
// for the Slack delivery; empty: none). A person sets it, never an agent.
type Escalation struct {
	AfterMinutes int
	ToPeople     bool
	SlackChannel string
	UpdatedAt    *time.Time
	UpdatedBy    *Actor
}

const (
	// ESettingsInvalid refuses a space's settings (its escalation) that do not fit.
	ESettingsInvalid = "settings.invalid"
)

// DecodeEscalationInput reads the contract's EscalationInput as a person sends it: JSON, each key
// once, its three fields and no other, then Validate.
func DecodeEscalationInput(body []byte) (Escalation, error) {
	f, err := decodeFields(body, "escalation")
	if err == nil {
		err = f.only("escalation", "afterMinutes", "toPeople", "slackChannel")
	}
	var e Escalation
	if err == nil {
		err = json.Unmarshal(body, &e)
	}
	if err != nil {
		return Escalation{}, Errorf(ESettingsInvalid, "%v", err)
	}
	return e, e.Validate()
}

// Validate checks an escalation as a person sets it.
func (e *Escalation) Validate() error {
	c := checker{}
	if e.AfterMinutes < 0 || e.AfterMinutes > MaxEscalateAfterMinutes {
		c.fail(ESettingsInvalid, "afterMinutes must be between 0 (never) and %d (a week); got %d", MaxEscalateAfterMinutes, e.AfterMinutes)
	}
	c.oneLine("slackChannel", e.SlackChannel)
	c.maxRunes("slackChannel", e.SlackChannel, MaxSlackChannelRunes)
	if c.err != nil {
		c.err.Code = ESettingsInvalid
	}
	if e.AfterMinutes > 0 && !e.ToPeople && e.SlackChannel == "" {
		c.fail(ESettingsInvalid, "escalation needs someone to tell: toPeople, a slackChannel, or both (or afterMinutes 0 to turn it off)")
	}
	if c.err != nil {
		return c.err
	}
	return nil
}

// escalationJSON is the contract's EscalationSettings.
type escalationJSON struct {
	AfterMinutes int    `json:"afterMinutes"`
	ToPeople     bool   `json:"toPeople"`
	SlackChannel string `json:"slackChannel,omitempty"`
	UpdatedAt    string `json:"updatedAt,omitempty"`
	UpdatedBy    *Actor `json:"updatedBy,omitempty"`
}

// MarshalJSON writes the contract's EscalationSettings.
func (e Escalation) MarshalJSON() ([]byte, error) {
	w := escalationJSON{AfterMinutes: e.AfterMinutes, ToPeople: e.ToPeople, SlackChannel: e.SlackChannel, UpdatedBy: e.UpdatedBy}
	if e.UpdatedAt != nil {
		w.UpdatedAt = FormatTime(*e.UpdatedAt)
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the contract's EscalationSettings (and EscalationInput, its first three
// fields), refusing fields it does not know.
func (e *Escalation) UnmarshalJSON(data []byte) error {
	f, err := decodeFields(data, "escalation")
	if err != nil {
		return err
	}
	if err := f.only("escalation", "afterMinutes", "toPeople", "slackChannel", "updatedAt", "updatedBy"); err != nil {
		return err
	}
	var w escalationJSON
	if err := firstError(
		f.get("escalation", "afterMinutes", &w.AfterMinutes, true),
		f.get("escalation", "toPeople", &w.ToPeople, true),
		f.get("escalation", "slackChannel", &w.SlackChannel, false),
		f.get("escalation", "updatedBy", &w.UpdatedBy, false),
	); err != nil {
		return err
	}
	v := Escalation{AfterMinutes: w.AfterMinutes, ToPeople: w.ToPeople, SlackChannel: w.SlackChannel, UpdatedBy: w.UpdatedBy}
	if _, ok := f["updatedAt"]; ok {
		var t time.Time
		if err := f.time("escalation", "updatedAt", &t, true); err != nil {
			return err
		}
		v.UpdatedAt = &t
	}
	*e = v
	return nil
}

// SettingsStore keeps a space's settings: today its escalation.
type SettingsStore interface {
	// Escalation returns a space's escalation; the zero Escalation (off) when none was set.
	Escalation(ctx context.Context, space string) (Escalation, error)
	// PutEscalation sets a space's escalation, replacing what was set.
	PutEscalation(ctx context.Context, space string, e Escalation) error
}

// escalated reports whether the ask was escalated already.
func escalated(a *Ask) bool {
	return slices.ContainsFunc(a.Thread, func(e Entry) bool { return e.Author == AuthorLoopback && e.Event == NoticeEscalated })
}

// DueAt is when the ask next needs Loopback without anyone moving: its deadline, or its
// escalation while it waits for the person and was not escalated yet, whichever comes first; nil
// when neither (a closed ask is never due). Stores keep it indexed (DueAsks).
func (a *Ask) DueAt() *time.Time {
	if a.Status == Closed {
		return nil
	}
	var due *time.Time
	if a.Deadline != nil {
		t := a.Deadline.At
		due = &t
	}
	if a.EscalatesAt != nil && a.Status == AwaitingHuman && !escalated(a) && (due == nil || a.EscalatesAt.Before(*due)) {
		t := *a.EscalatesAt
		due = &t
	}
	return due
}

// ApplyDue does what is due on the ask at now, and reports whether it changed it: at its
// deadline, an open ask closes with a NoticeDeadline (whoever's move it was: the deadline is the
// agent's, which goes on with the default or without an answer); at its escalation time, an ask
// still waiting for the person gets a NoticeEscalated, once, and stays open. Nothing is due on a
// closed ask: a person who answered first has won.
//
// unit is how long one of the space's escalation minutes lasts (Service.EscalationUnit), for the
// notice's words.
func ApplyDue(a *Ask, now Clock, unit time.Duration) bool {
	if a.Status == Closed {
		return false
	}
	due := a.DueAt()
	t := now()
	if due == nil || t.Before(*due) {
		return false
	}
	if a.Deadline != nil && !t.Before(a.Deadline.At) {
		a.Thread = append(a.Thread, Entry{Author: AuthorLoopback, Event: NoticeDeadline, Text: DeadlineText(a.Deadline), At: t})
		a.Status, a.ClosedAt, a.Waiting, a.UpdatedAt = Closed, &t, false, t
		return true
	}
	if unit <= 0 {
		unit = time.Minute
	}
	mins := int(a.EscalatesAt.Sub(a.CreatedAt).Round(unit) / unit)
	a.Thread = append(a.Thread, Entry{Author: AuthorLoopback, Event: NoticeEscalated, Text: EscalatedText(mins), At: t})
	a.UpdatedAt = t
	return true
}

// DeadlineText is the deadline notice's words, for the thread and every copy of the ask.
func DeadlineText(d *Deadline) string {
	when := d.At.UTC().Format("2006-01-02 15:04:05 UTC")
	if d.Default == nil {
		return fmt.Sprintf("Nobody answered by the deadline, %s. The agent set no default, so it was told that nobody answered.", when)
	}
	return fmt.Sprintf("Nobody answered by the deadline, %s. The agent took the default it set: %s.", when, DescribeReply(*d.Default))
}

// EscalatedText is the escalation notice's words.
func EscalatedText(minutes int) string {
	unit := "minutes"
	if minutes == 1 {
		unit = "minute"
	}
	return fmt.Sprintf("Nobody answered within %d %s, so this ask was also sent to the other people of the space.", minutes, unit)
}

// DescribeReply says what a reply decides, in a few words: "chose “Yes”", "approved".
func DescribeReply(r Reply) string {
	switch r.Outcome {
	case OutcomeAnswered:
		var parts []string
		if len(r.Selected) > 0 {
			q := make([]string, len(r.Selected))
			for i, s := range r.Selected {
				q[i] = "“" + s + "”"
			}
			parts = append(parts, "chose "+strings.Join(q, ", "))
		}
		if strings.TrimSpace(r.Text) != "" {
			parts = append(parts, "wrote “"+strings.TrimSpace(r.Text)+"”")
		}
		return strings.Join(parts, " and ")
	case OutcomeApproved:
		if strings.TrimSpace(r.Note) != "" {
			return "approved, noting “" + strings.TrimSpace(r.Note) + "”" + commentCount(r.Comments)
		}
		return "approved" + commentCount(r.Comments)
	case OutcomeChangesRequested:
		return "requested changes: “" + strings.TrimSpace(r.Feedback) + "”" + commentCount(r.Comments)
	case OutcomeDismissed:
		return "dismissed"
	case OutcomeResponded:
		return "resolved every point"
	}
	return string(r.Outcome)
}

// DeadlineReached is what a waiting agent is told of an ask its deadline closed (Reply.Deadline):
// when, whether the reply is the default it set, and the words to read.
type DeadlineReached struct {
	At      time.Time
	Default bool
}

// deadlineMove is the move a deadline made on a closed ask: the default, marked as a default,
// or (with none) a dismissal marked as nobody's; false when the deadline did not close it.
func deadlineMove(a *Ask) (*Reply, bool) {
	if a.Status != Closed || a.Deadline == nil || len(a.Thread) == 0 {
		return nil, false
	}
	last := a.Thread[len(a.Thread)-1]
	if last.Author != AuthorLoopback || last.Event != NoticeDeadline {
		return nil, false
	}
	r := Reply{Outcome: OutcomeDismissed}
	if a.Deadline.Default != nil {
		r = *a.Deadline.Default
	}
	r.By = nil
	r.Deadline = &DeadlineReached{At: a.Deadline.At, Default: a.Deadline.Default != nil}
	return &r, true
}

// People are the people of a space: whom each live person's credential belongs to (owner and
// teammates), once each, in the order of their first credential. Agents' credentials name no
// one new: an agent acts for a person.
func People(creds []*Credential) []Actor {
	var out []Actor
	seen := map[string]bool{}
	for _, c := range creds {
		if !c.Live() || !c.Role.IsPerson() {
			continue
		}
		p := c.Person
		if p.ID == "" {
			p = c.Actor
		}
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		out = append(out, p)
	}
	return out
}

// Recipients are whom an escalation of a reaches: the people of its space other than the person
// whose agent raised it (who was told already).
func Recipients(a *Ask, people []Actor) []Actor {
	var out []Actor
	for _, p := range people {
		if a.RaisedBy != nil && p.ID == a.RaisedBy.ID {
			continue
		}
		out = append(out, p)
	}
	return out
}

// EscalationFor says whether a committed change is an escalation: the change that added the
// ask's NoticeEscalated (its last turn, written at the ask's UpdatedAt). A delivery channel (push,
// Slack, email) that hears it sends the ask to Recipients(ch.Ask, people of the space), and to
// the space's Escalation.SlackChannel; it returns the notice's entry. Any later change of the ask
// is not one, so each channel sends it once.
func EscalationFor(ch Change) (Entry, bool) {
	a := ch.Ask
	if a == nil || a.Status != AwaitingHuman || len(a.Thread) == 0 {
		return Entry{}, false
	}
	last := a.Thread[len(a.Thread)-1]
	if last.Author != AuthorLoopback || last.Event != NoticeEscalated || !last.At.Equal(a.UpdatedAt) {
		return Entry{}, false
	}
	return last, true
}
