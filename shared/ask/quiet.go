package ask

import (
	"context"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // quiet hours name IANA zones; Lambda's image has no zoneinfo of its own
)

// Quiet hours (contract revision 4): a person's daily hours, in their own time zone, when
// nothing is pushed to their devices. An ask that opens then still waits in the inbox (and on
// every other surface); its push is not held and sent later but dropped, since by the end of the
// quiet hours the inbox shows it anyway and a burst of stale notifications at 07:00 helps no
// one. Only the person sets them, from the inbox: never an agent credential.

// QuietHours is the contract's QuietHours: from Start to End (wall-clock "HH:MM", End after
// midnight when it is earlier than Start) in TimeZone (an IANA name such as Europe/Berlin).
type QuietHours struct {
	Start    string `json:"start"`
	End      string `json:"end"`
	TimeZone string `json:"timeZone"`
}

// EQuietHoursInvalid refuses quiet hours that do not parse.
const EQuietHoursInvalid = "quiet_hours.invalid"

// clock reads "HH:MM" as minutes after midnight.
func clock(s string) (int, bool) {
	var h, m int
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	if _, err := fmt.Sscanf(s, "%02d:%02d", &h, &m); err != nil || h > 23 || m > 59 || h < 0 || m < 0 {
		return 0, false
	}
	return h*60 + m, true
}

// CheckQuietHours checks quiet hours as a person gives them, and returns them tidied.
func CheckQuietHours(q QuietHours) (QuietHours, error) {
	q.Start, q.End, q.TimeZone = strings.TrimSpace(q.Start), strings.TrimSpace(q.End), strings.TrimSpace(q.TimeZone)
	start, ok := clock(q.Start)
	if !ok {
		return q, Errorf(EQuietHoursInvalid, "start must be a time of day as HH:MM, 00:00 to 23:59 (got %q)", q.Start)
	}
	end, ok := clock(q.End)
	if !ok {
		return q, Errorf(EQuietHoursInvalid, "end must be a time of day as HH:MM, 00:00 to 23:59 (got %q)", q.End)
	}
	if start == end {
		return q, Errorf(EQuietHoursInvalid, "start and end are the same time: quiet hours need a length (to stop them, delete them)")
	}
	if q.TimeZone == "" || len(q.TimeZone) > 64 || strings.EqualFold(q.TimeZone, "local") {
		return q, Errorf(EQuietHoursInvalid, "timeZone must be an IANA time zone such as Europe/Berlin (got %q)", q.TimeZone)
	}
	if _, err := time.LoadLocation(q.TimeZone); err != nil {
		return q, Errorf(EQuietHoursInvalid, "timeZone must be an IANA time zone such as Europe/Berlin (got %q)", q.TimeZone)
	}
	return q, nil
}

// Quiet reports whether t falls in the quiet hours, by the wall clock of their time zone: from
// 22:00 to 07:00 is quiet from 22:00 to 06:59 local time whatever the offset that day (across a
// change of daylight saving time too: an hour skipped is skipped, an hour repeated is quiet
// both times). Quiet hours that do not check (CheckQuietHours) are never quiet.
func (q QuietHours) Quiet(t time.Time) bool {
	start, ok1 := clock(q.Start)
	end, ok2 := clock(q.End)
	loc, err := time.LoadLocation(q.TimeZone)
	if !ok1 || !ok2 || err != nil || start == end {
		return false
	}
	l := t.In(loc)
	m := l.Hour()*60 + l.Minute()
	if start < end {
		return m >= start && m < end
	}
	return m >= start || m < end
}

// QuietHoursStore keeps each person's quiet hours. Adapters: sqlite, dynamo; both pass
// asktest.Run (it is part of PushStore).
type QuietHoursStore interface {
	// QuietHours reads a person's quiet hours; none set is an *Error with ENotFound.
	QuietHours(ctx context.Context, space, person string) (QuietHours, error)
	// PutQuietHours sets them, replacing any.
	PutQuietHours(ctx context.Context, space, person string, q QuietHours) error
	// DeleteQuietHours removes them; removing none is not an error.
	DeleteQuietHours(ctx context.Context, space, person string) error
}

// QuietHoursNotSet is the store's answer for a person without quiet hours.
func QuietHoursNotSet() error {
	return Errorf(ENotFound, "no quiet hours are set: pushes reach this person at any hour")
}
