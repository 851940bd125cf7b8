//go:build !linux

package mcptools

import "net"

// onHangup calls gone once the client of conn leaves; stop, before conn is closed, stops
// listening. Here, a goroutine reading the connection hears it.
func onHangup(conn net.Conn, gone func()) (stop func()) { return readUntilGone(conn, gone) }
