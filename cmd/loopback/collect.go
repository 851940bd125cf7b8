package main

import (
	"runtime"
	"runtime/metrics"
)

// quietCollector collects the garbage a burst of work left once the server has gone quiet.
//
// Go collects when the heap reaches twice what was live at the last collection. A server that
// took 10,000 waiting calls in a few seconds and then waits for people allocates next to nothing:
// no collection comes for up to two minutes (Go's own forced one), and until then the burst's
// garbage stays resident, about 40 KiB per waiting call instead of 27 (docs/benchmarks.md). So
// every tick, if no collection ran since the last tick and the garbage is at least a quarter of
// what is live (and 4 MiB), collect once. An idle server, or a busy one whose collections run on
// their own, is left alone: the cost is one collection after a burst, none at rest.
type quietCollector struct {
	cycles  uint64 // collections seen at the last tick
	samples []metrics.Sample
}

func newQuietCollector() *quietCollector {
	return &quietCollector{samples: []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}}
}

// minGarbage is the least garbage worth a collection.
const minGarbage = 4 << 20

// tick collects if the heap went quiet with garbage in it, and reports whether it did.
func (q *quietCollector) tick() bool {
	metrics.Read(q.samples)
	cycles, live, objects := q.samples[0].Value.Uint64(), q.samples[1].Value.Uint64(), q.samples[2].Value.Uint64()
	quiet := cycles == q.cycles
	q.cycles = cycles
	if !quiet || objects < live || objects-live < max(minGarbage, live/4) {
		return false
	}
	runtime.GC()
	metrics.Read(q.samples[:1])
	q.cycles = q.samples[0].Value.Uint64()
	return true
}
