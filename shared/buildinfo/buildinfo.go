// Package buildinfo names the code that answers: the contract revision it writes and when its
// build was made. Every HTTP response carries both, so a client can tell when it is out of date.
package buildinfo

// Revision is the revision of the contract (spec/main.tsp) this code writes.
const Revision = 8

// Build is when this build was made, set by the Makefile with -ldflags -X. A build without it
// (go run, go test) says "dev".
var Build = "dev"
