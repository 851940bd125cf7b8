package main

import (
	"flag"

	"github.com/loopback-hq/loopback/shared/ask"
)

// openAskFlags are `loopback serve`'s flags for what agents may hold open (docs/limits.md). The
// defaults keep every response under Lambda's cap on AWS; locally, where there is none, a load
// test may raise them (bench/mcpwait holds ten thousand waiting asks).
func openAskFlags(fs *flag.FlagSet) *ask.Bounds {
	b := &ask.Bounds{}
	fs.IntVar(&b.OpenAsksPerCredential, "max-open-asks", ask.MaxOpenAsksPerCredential, "open asks one agent credential may hold at once (ask.open_limit beyond)")
	fs.IntVar(&b.OpenSizePerCredential, "max-open-bytes", ask.MaxOpenSizePerCredential, "bytes of open asks one agent credential may hold at once")
	fs.IntVar(&b.OpenSize, "max-space-open-bytes", ask.MaxOpenSize, "bytes of open asks a space holds when an agent opens one; a snapshot may grow by as much as this is raised")
	return b
}
