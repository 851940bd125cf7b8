package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/loopback-hq/loopback/bench/internal/lbserver"
)

// serveFloor is the floor's server: WebSocket connections on /api/v1/events (the subprotocol
// selected, a first frame sent, then only the client's control frames read, one goroutine each),
// and POST /fire, which writes its body as one prepared message to every socket, each write in
// a goroutine of its own, and answers 200 at once. Nothing else: what any fan-out must do. Once
// it listens it writes where to the file at ready, as `loopback serve --ready-file` does.
func serveFloor(ready string) {
	var (
		mu    sync.Mutex
		conns = map[*websocket.Conn]struct{}{}
	)
	up := websocket.Upgrader{
		ReadBufferSize: 512, WriteBufferSize: 32 << 10, WriteBufferPool: &sync.Pool{},
		Subprotocols: []string{"loopback.v1"},
		CheckOrigin:  func(*http.Request) bool { return true },
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/events", func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"snapshot"}`)); err != nil {
			c.Close()
			return
		}
		mu.Lock()
		conns[c] = struct{}{}
		mu.Unlock()
		go func() {
			defer func() {
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				c.Close()
			}()
			for {
				if _, _, err := c.NextReader(); err != nil {
					return
				}
			}
		}()
	})
	mux.HandleFunc("POST /fire", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		pm, err := websocket.NewPreparedMessage(websocket.TextMessage, b)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		mu.Lock()
		for c := range conns {
			go c.WritePreparedMessage(pm)
		}
		mu.Unlock()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	base := "http://" + ln.Addr().String()
	b, _ := json.Marshal(lbserver.Ready{Addr: ln.Addr().String(), URL: base, API: base + "/api/v1", MCP: base + "/mcp"})
	err = os.WriteFile(ready+".new", b, 0o600)
	if err == nil {
		err = os.Rename(ready+".new", ready)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, mux)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	<-stop
}
