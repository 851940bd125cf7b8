package ask

import (
	"fmt"
	"strings"
)

// PointState is one point of a briefing as it stands after every turn so far.
type PointState struct {
	Point
	Parent   string // "" for a top-level point
	Depth    int    // 1 for `3`, 2 for `3.1`, 3 for `3.1.1`
	Children []string
	// Resolved: the person is done with it (or with a point above it).
	Resolved bool
	// Pending: the person wrote on it without resolving it, and the agent has not answered since.
	Pending bool
}

// Points is a briefing's points by id, in the order they were made.
type Points struct {
	Order []string
	ByID  map[string]*PointState
}

// BriefingPoints replays an ask's prompt and thread into the state of every point. It is how the
// rules, the inbox and the tests agree on what is resolved and what the agent still owes.
func BriefingPoints(a *Ask) *Points {
	ps := &Points{ByID: map[string]*PointState{}}
	if a.Briefing == nil {
		return ps
	}
	for _, s := range a.Briefing.Sections {
		for _, p := range s.Points {
			ps.add(p, "")
		}
	}
	for _, e := range a.Thread {
		switch {
		case e.Author == AuthorHuman && e.Reply != nil && e.Reply.Outcome == OutcomeResponded:
			ps.applyResponded(e.Reply.Points)
		case e.Author == AuthorAgent && e.Point != "":
			if st := ps.ByID[e.Point]; st != nil {
				st.Pending = false
				for _, sub := range e.Points {
					ps.add(sub, e.Point)
				}
			}
		}
	}
	return ps
}

func (ps *Points) add(p Point, parent string) {
	st := &PointState{Point: p, Parent: parent, Depth: strings.Count(p.ID, ".") + 1}
	ps.ByID[p.ID] = st
	ps.Order = append(ps.Order, p.ID)
	if parent != "" {
		ps.ByID[parent].Children = append(ps.ByID[parent].Children, p.ID)
	}
}

func (ps *Points) applyResponded(replies []PointReply) {
	for _, r := range replies {
		st := ps.ByID[r.Point]
		if st == nil {
			continue
		}
		if r.Resolved {
			ps.resolve(r.Point)
		} else if !Blank(r.Text) && !st.Resolved {
			st.Pending = true
		}
	}
}

// resolve marks a point and everything beneath it resolved.
func (ps *Points) resolve(id string) {
	st := ps.ByID[id]
	st.Resolved, st.Pending = true, false
	for _, c := range st.Children {
		ps.resolve(c)
	}
}

// AllResolved reports whether the person is done with every point.
func (ps *Points) AllResolved() bool {
	for _, st := range ps.ByID {
		if !st.Resolved {
			return false
		}
	}
	return true
}

// Pending lists the points the agent owes an answer on, in order.
func (ps *Points) Pending() []string {
	var out []string
	for _, id := range ps.Order {
		if ps.ByID[id].Pending {
			out = append(out, id)
		}
	}
	return out
}

// checkResponded enforces the contract's rules on a `responded` reply against the briefing as it
// stands: each point named exists, is open, is named once, with words or resolved; and the reply
// either resolves every point or leaves the agent a point to answer. It reports whether the reply
// closes the briefing.
func checkResponded(ps *Points, replies []PointReply) (closes bool, err error) {
	named := map[string]bool{}
	for i, r := range replies {
		path := fmt.Sprintf("points[%d]", i)
		st := ps.ByID[r.Point]
		switch {
		case st == nil:
			return false, Errorf(EReplyInvalid, "%s: this briefing has no point %q", path, r.Point)
		case named[r.Point]:
			return false, Errorf(EReplyInvalid, "%s: point %s is named twice; name each point at most once", path, r.Point)
		case st.Resolved:
			return false, Errorf(EReplyInvalid, "%s: point %s is already resolved", path, r.Point)
		case !r.Resolved && Blank(r.Text):
			return false, Errorf(EReplyInvalid, "%s: point %s needs words, or resolved: true", path, r.Point)
		}
		named[r.Point] = true
	}
	after := clonePoints(ps)
	after.applyResponded(replies)
	if after.AllResolved() {
		return true, nil
	}
	if len(after.Pending()) == 0 {
		return false, Errorf(EReplyInvalid, "points: this reply leaves points open without writing on any; resolve every point, or write on at least one for the agent to answer")
	}
	return false, nil
}

func clonePoints(ps *Points) *Points {
	c := &Points{Order: ps.Order, ByID: make(map[string]*PointState, len(ps.ByID))}
	for id, st := range ps.ByID {
		cp := *st
		c.ByID[id] = &cp
	}
	return c
}

// subPointIDs numbers n new sub-points beneath a point, after the ones it already has.
func subPointIDs(st *PointState, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s.%d", st.ID, len(st.Children)+i+1)
	}
	return ids
}
