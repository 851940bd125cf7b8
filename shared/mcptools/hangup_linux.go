//go:build linux

package mcptools

import (
	"errors"
	"net"
	"sync"
	"syscall"
)

// hangups is one epoll instance watching every parked connection for its client leaving
// (EPOLLRDHUP: the client closed its side; EPOLLHUP, EPOLLERR: the connection broke), and one
// goroutine waiting on it, instead of a goroutine per connection blocked in a read (about 3–5 KiB
// of stack each, docs/benchmarks.md). A connection is watched once (EPOLLONESHOT); bytes the
// client sends wake nothing (a parked connection reads nothing more).
type hangups struct {
	once sync.Once
	epfd int
	err  error

	mu sync.Mutex
	by map[int32]*hangup
}

type hangup struct{ gone func() }

var clientHangups hangups

func (hs *hangups) start() error {
	hs.once.Do(func() {
		hs.epfd, hs.err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if hs.err == nil {
			hs.by = map[int32]*hangup{}
			go hs.run()
		}
	})
	return hs.err
}

// run hands each hangup to its connection's gone, on a goroutine of its own (gone may write the
// call's answer).
func (hs *hangups) run() {
	events := make([]syscall.EpollEvent, 128)
	for {
		n, err := syscall.EpollWait(hs.epfd, events, -1)
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			return // the instance is gone; watched connections end on their keepalive's write
		}
		for _, ev := range events[:n] {
			hs.mu.Lock()
			h := hs.by[ev.Fd]
			delete(hs.by, ev.Fd)
			hs.mu.Unlock()
			if h != nil {
				go h.gone()
			}
		}
	}
}

// onHangup calls gone once the client of conn leaves; stop, called before conn is closed, stops
// watching it. A connection that is not a socket is read by a goroutine instead.
func onHangup(conn net.Conn, gone func()) (stop func()) {
	sc, ok := conn.(syscall.Conn)
	if !ok || clientHangups.start() != nil {
		return readUntilGone(conn, gone)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return readUntilGone(conn, gone)
	}
	h := &hangup{gone: gone}
	var fd int32
	var added error
	err = rc.Control(func(s uintptr) {
		fd = int32(s)
		clientHangups.mu.Lock()
		defer clientHangups.mu.Unlock()
		// A descriptor closed before is out of the epoll set already: its number may be reused.
		clientHangups.by[fd] = h
		added = syscall.EpollCtl(clientHangups.epfd, syscall.EPOLL_CTL_ADD, int(s),
			&syscall.EpollEvent{Events: syscall.EPOLLRDHUP | syscall.EPOLLONESHOT, Fd: fd})
		if added != nil {
			delete(clientHangups.by, fd)
		}
	})
	if err != nil || added != nil {
		return readUntilGone(conn, gone)
	}
	return func() {
		clientHangups.mu.Lock()
		defer clientHangups.mu.Unlock()
		if clientHangups.by[fd] != h {
			return // heard already, or stopped
		}
		delete(clientHangups.by, fd)
		// Not if conn is closed already (Control fails): its number may be another's now, and a
		// closed descriptor left the epoll set by itself.
		_ = rc.Control(func(s uintptr) {
			_ = syscall.EpollCtl(clientHangups.epfd, syscall.EPOLL_CTL_DEL, int(s), nil)
		})
	}
}
