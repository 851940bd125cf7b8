//go:build !linux

package main

import (
	"errors"

	"github.com/gorilla/websocket"
)

type epollReader struct{}

func newEpollReader() (*epollReader, error)    { return nil, errors.New("-client epoll needs Linux") }
func (*epollReader) add(*websocket.Conn) error { return nil }
func (*epollReader) run(func([]byte))          {}
func (*epollReader) close()                    {}
