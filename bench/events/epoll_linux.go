//go:build linux

package main

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
	"syscall"

	"github.com/gorilla/websocket"
)

// epollReader reads every client socket's frames on one goroutine, from one epoll set: the
// least the clients can take of the cores they share with the server, so that what is timed is
// the server's fan-out more than the clients' wake-ups (on a real deployment each socket is on a
// device of its own). It takes over a connection once its first frame (the snapshot) was read,
// reads server frames (unmasked, each message one frame, as the server writes them) and answers
// pings.
type epollReader struct {
	epfd    int
	socks   []*rawSocket
	stopped atomic.Bool
}

type rawSocket struct {
	fd  int
	buf []byte
}

func newEpollReader() (*epollReader, error) {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &epollReader{epfd: fd}, nil
}

// add takes over c, whose reader holds nothing unread (the server sends nothing after the snapshot
// until a change).
func (r *epollReader) add(c *websocket.Conn) error {
	sc, ok := c.NetConn().(syscall.Conn)
	if !ok {
		return errors.New("not a socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	fd := -1
	if err := raw.Control(func(f uintptr) { fd = int(f) }); err != nil {
		return err
	}
	r.socks = append(r.socks, &rawSocket{fd: fd})
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(len(r.socks) - 1)}
	return syscall.EpollCtl(r.epfd, syscall.EPOLL_CTL_ADD, fd, &ev)
}

// run calls onMessage with every message read, until close is called.
func (r *epollReader) run(onMessage func([]byte)) {
	events := make([]syscall.EpollEvent, 512)
	buf := make([]byte, 64<<10)
	for !r.stopped.Load() {
		n, err := syscall.EpollWait(r.epfd, events, 100)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			s := r.socks[ev.Fd]
			for {
				k, err := syscall.Read(s.fd, buf)
				if k > 0 {
					s.buf = append(s.buf, buf[:k]...)
				}
				if err != nil || k <= 0 || k < len(buf) {
					if k == 0 && err == nil { // the server closed it
						_ = syscall.EpollCtl(r.epfd, syscall.EPOLL_CTL_DEL, s.fd, nil)
					}
					break
				}
			}
			s.frames(onMessage)
		}
	}
}

// frames hands over each whole frame buffered, and answers pings.
func (s *rawSocket) frames(onMessage func([]byte)) {
	for {
		b := s.buf
		if len(b) < 2 {
			break
		}
		op, n, h := b[0]&0x0f, int(b[1]&0x7f), 2
		switch n {
		case 126:
			if len(b) < 4 {
				return
			}
			n, h = int(binary.BigEndian.Uint16(b[2:])), 4
		case 127:
			if len(b) < 10 {
				return
			}
			n, h = int(binary.BigEndian.Uint64(b[2:])), 10
		}
		if len(b) < h+n {
			return
		}
		payload := b[h : h+n]
		switch op {
		case websocket.TextMessage, websocket.BinaryMessage:
			onMessage(payload)
		case websocket.PingMessage:
			// A pong, masked as a client must (with the zero key, which leaves it as it is).
			pong := append([]byte{0x8a, 0x80 | byte(len(payload)), 0, 0, 0, 0}, payload...)
			_, _ = syscall.Write(s.fd, pong)
		}
		s.buf = append(s.buf[:0], b[h+n:]...)
	}
}

// close ends run, within 100 ms.
func (r *epollReader) close() { r.stopped.Store(true) }
