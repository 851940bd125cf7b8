package events

import "github.com/loopback-hq/loopback/shared/ask"

// Latest remembers, for one socket, the newest version of each ask it has sent, so that the socket
// never sends an ask older than one its client already has. The hub may hand over two commits of
// one ask out of order (each writer publishes after its own commit), and a change queued before
// the snapshot was read is already in the snapshot: both are dropped here.
type Latest map[string]int

// Admit reports whether a is newer than anything sent for its id, and if so records it as sent.
func (l Latest) Admit(a *ask.Ask) bool { return l.admit(a.ID, a.Version) }

func (l Latest) admit(id string, version int) bool {
	if v, ok := l[id]; ok && version <= v {
		return false
	}
	l[id] = version
	return true
}

// AdmitSnapshot records every ask of a snapshot in its contract JSON as sent.
func (l Latest) AdmitSnapshot(s *ask.Snapshot) {
	for _, list := range [][]ask.WireAsk{s.Open, s.Recent} {
		for _, a := range list {
			l.admit(a.ID, a.Version)
		}
	}
}
