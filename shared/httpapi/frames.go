package httpapi

import (
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
)

// frameCache encodes each change once for all the sockets it goes to: the hub hands every
// subscriber the same *ask.Ask for one change, so it is the key. It remembers the last few
// changes only; a socket further behind encodes its own copy.
type frameCache struct {
	mu   sync.Mutex
	m    map[*ask.Ask]*encodedFrame
	ring [16]*ask.Ask
	next int
}

type encodedFrame struct {
	once     sync.Once
	b        []byte
	prepared *websocket.PreparedMessage // b as a WebSocket message, framed once for every socket
	err      error
}

func (c *frameCache) encode(ch ask.Change) (*encodedFrame, error) {
	c.mu.Lock()
	e := c.m[ch.Ask]
	if e == nil {
		if c.m == nil {
			c.m = map[*ask.Ask]*encodedFrame{}
		}
		delete(c.m, c.ring[c.next])
		c.ring[c.next] = ch.Ask
		c.next = (c.next + 1) % len(c.ring)
		e = &encodedFrame{}
		c.m[ch.Ask] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		if e.b, e.err = events.Encode(events.Frame(ch)); e.err == nil {
			e.prepared, e.err = websocket.NewPreparedMessage(websocket.TextMessage, e.b)
		}
	})
	return e, e.err
}

// minWriteRate is the slowest a client may take frames: below it, a write times out.
const minWriteRate = 64 << 10 // bytes per second

// writeTimeout is how long a frame of n bytes may take to write.
func writeTimeout(base time.Duration, n int) time.Duration {
	return base + time.Duration(n)*time.Second/minWriteRate
}
