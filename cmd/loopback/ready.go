package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// Listening is where a started server can be reached: what a test or a harness needs to find it,
// and nothing secret. The welcome text says the same for people, with their tokens; this carries
// no token at all, so it may be written where an agent can read it.
type Listening struct {
	Addr string `json:"addr"` // the address it listens on (host:port)
	URL  string `json:"url"`  // where people reach it: --public-url, or http://ADDR
	API  string `json:"api"`  // URL + /api/v1
	MCP  string `json:"mcp"`  // URL + /mcp
}

func listening(ln net.Listener, base string) Listening {
	return Listening{Addr: ln.Addr().String(), URL: base, API: base + "/api/v1", MCP: base + "/mcp"}
}

// readyFileFlag is --ready-file, which serve and aws-local both take.
func readyFileFlag(fs *flag.FlagSet) *string {
	return fs.String("ready-file", "", "once listening, write where this server is (JSON: addr, url, api, mcp; no token) to this file, for a harness that started it; removed when it stops")
}

// announce tells whoever started the server that it listens and where: ready (a test in this
// package, given the value itself), and the file at path (a harness of a child process, which
// would otherwise read the welcome text meant for people). The file appears whole (written
// beside it, then renamed) and goes when the returned func runs, as the server stops.
func announce(path string, l Listening, ready func(Listening)) (remove func(), err error) {
	remove = func() {}
	if path != "" {
		b, err := json.Marshal(l)
		if err != nil {
			return remove, err
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), ".ready-*")
		if err != nil {
			return remove, fmt.Errorf("the ready file: %w", err)
		}
		_, werr := tmp.Write(append(b, '\n'))
		if err := tmp.Close(); werr == nil {
			werr = err
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), path)
		}
		if werr != nil {
			os.Remove(tmp.Name())
			return remove, fmt.Errorf("the ready file: %w", werr)
		}
		remove = func() { os.Remove(path) }
	}
	if ready != nil {
		ready(l)
	}
	return remove, nil
}
