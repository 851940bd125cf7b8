package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

var sink [][]byte

// TestQuietCollector: a tick collects garbage left with no collection since the last tick, once;
// a quiet heap with no garbage, or one whose collections ran on their own, is left alone.
func TestQuietCollector(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no collection but the ones asked for
	runtime.GC()
	q := newQuietCollector()
	q.tick() // the first tick only sees how many collections ran
	if q.tick() {
		t.Fatal("collected a heap with no garbage")
	}
	for range 4096 {
		sink = append(sink, make([]byte, 4096)) // 16 MiB, then dropped: garbage
	}
	sink = nil
	if !q.tick() {
		t.Fatal("left 16 MiB of garbage after a quiet tick")
	}
	if q.tick() {
		t.Fatal("collected again with nothing new")
	}
	for range 4096 {
		sink = append(sink, make([]byte, 4096))
	}
	sink = nil
	runtime.GC() // a collection of its own since the last tick: not quiet
	for range 4096 {
		sink = append(sink, make([]byte, 4096))
	}
	sink = nil
	if q.tick() {
		t.Fatal("collected although a collection had just run")
	}
}
