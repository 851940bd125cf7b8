// Package smtptest is a stand-in SMTP server for tests: a real listener on a free port of
// 127.0.0.1 that speaks enough of RFC 5321 for a real client (github.com/wneessen/go-mail):
// EHLO/HELO, AUTH PLAIN (RFC 4954) when it is given a user, MAIL, RCPT, DATA (with RFC 5321's
// dot-stuffing), RSET, NOOP and QUIT. It records every message it accepts, and refuses what a
// real server refuses: a wrong password (535), mail before authenticating when authentication
// is required (530), commands out of order (503), unknown commands (502).
package smtptest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
)

// Message is one accepted message: the envelope and the data as sent.
type Message struct {
	From string
	To   []string
	Data []byte
}

// Server is a running stand-in.
type Server struct {
	// Addr is host:port; Host and Port its parts.
	Addr string
	Host string
	Port int

	user, pass string
	ln         net.Listener

	mu       sync.Mutex
	conns    map[net.Conn]bool
	messages []Message
	authFail int
	wg       sync.WaitGroup
}

// Start starts a server that takes mail from anyone (no AUTH advertised).
func Start(t testing.TB) *Server { return StartAuth(t, "", "") }

// StartAuth starts a server that requires AUTH PLAIN with user and pass before MAIL (when user
// is empty, none). It stops when the test ends.
func StartAuth(t testing.TB, user, pass string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().(*net.TCPAddr)
	s := &Server{Addr: a.String(), Host: "127.0.0.1", Port: a.Port, user: user, pass: pass, ln: ln}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.Close)
	return s
}

// Close stops the server, ends its connections and waits for them.
func (s *Server) Close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Messages returns the messages accepted so far, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// AuthFailures counts refused AUTH attempts.
func (s *Server) AuthFailures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authFail
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.conns == nil {
			s.conns = map[net.Conn]bool{}
		}
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.session(c)
		}()
	}
}

// maxData bounds one message's data.
const maxData = 10 << 20

func (s *Server) session(c net.Conn) {
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	reply := func(format string, args ...any) {
		fmt.Fprintf(w, format+"\r\n", args...)
		w.Flush()
	}
	reply("220 smtptest ESMTP ready")
	var greeted, authed bool
	var from string
	var to []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			greeted, from, to = true, "", nil
			ext := []string{"smtptest", "8BITMIME", "SMTPUTF8", fmt.Sprintf("SIZE %d", maxData)}
			if s.user != "" {
				ext = append(ext, "AUTH PLAIN")
			}
			for i, e := range ext {
				sep := "-"
				if i == len(ext)-1 {
					sep = " "
				}
				fmt.Fprintf(w, "250%s%s\r\n", sep, e)
			}
			w.Flush()
		case "HELO":
			greeted, from, to = true, "", nil
			reply("250 smtptest")
		case "AUTH":
			mech, resp, _ := strings.Cut(arg, " ")
			switch {
			case !greeted:
				reply("503 5.5.1 EHLO first")
				continue
			case s.user == "":
				reply("502 5.5.1 AUTH not supported")
				continue
			case authed:
				reply("503 5.5.1 already authenticated")
				continue
			case !strings.EqualFold(mech, "PLAIN"):
				reply("504 5.5.4 unrecognised authentication type")
				continue
			}
			if resp == "" {
				reply("334 ")
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				resp = strings.TrimRight(l, "\r\n")
			}
			raw, err := base64.StdEncoding.DecodeString(resp)
			parts := strings.Split(string(raw), "\x00")
			if err != nil || len(parts) != 3 || parts[1] != s.user || parts[2] != s.pass {
				s.mu.Lock()
				s.authFail++
				s.mu.Unlock()
				reply("535 5.7.8 Authentication credentials invalid")
				continue
			}
			authed = true
			reply("235 2.7.0 Authentication successful")
		case "MAIL":
			switch {
			case !greeted:
				reply("503 5.5.1 EHLO first")
			case s.user != "" && !authed:
				reply("530 5.7.0 Authentication required")
			case !strings.HasPrefix(strings.ToUpper(arg), "FROM:"):
				reply("501 5.5.4 syntax: MAIL FROM:<address>")
			default:
				from, to = path(arg[5:]), nil
				reply("250 2.1.0 OK")
			}
		case "RCPT":
			switch {
			case from == "":
				reply("503 5.5.1 MAIL first")
			case !strings.HasPrefix(strings.ToUpper(arg), "TO:"):
				reply("501 5.5.4 syntax: RCPT TO:<address>")
			default:
				to = append(to, path(arg[3:]))
				reply("250 2.1.5 OK")
			}
		case "DATA":
			if len(to) == 0 {
				reply("503 5.5.1 RCPT first")
				continue
			}
			reply("354 End data with <CR><LF>.<CR><LF>")
			var data bytes.Buffer
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" || l == ".\n" {
					break
				}
				l = strings.TrimPrefix(l, ".") // dot-stuffing (RFC 5321 4.5.2)
				if data.Len()+len(l) > maxData {
					reply("552 5.3.4 message too big")
					return
				}
				data.WriteString(l)
			}
			s.mu.Lock()
			s.messages = append(s.messages, Message{From: from, To: to, Data: data.Bytes()})
			s.mu.Unlock()
			from, to = "", nil
			reply("250 2.0.0 OK queued")
		case "RSET":
			from, to = "", nil
			reply("250 2.0.0 OK")
		case "NOOP":
			reply("250 2.0.0 OK")
		case "QUIT":
			reply("221 2.0.0 Bye")
			return
		default:
			reply("502 5.5.2 command not recognised")
		}
	}
}

// path reads an SMTP path, <address> and any parameters after it.
func path(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '>'); strings.HasPrefix(s, "<") && i > 0 {
		return s[1:i]
	}
	return strings.Fields(s)[0]
}

// Parts reads a message: its headers, and its text/plain and text/html bodies (decoded from
// their transfer encoding, with \n line ends), from a single part or a multipart/alternative.
func (m Message) Parts() (header mail.Header, text, html string, err error) {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return nil, "", "", err
	}
	dec := new(mime.WordDecoder)
	for k, vs := range msg.Header {
		for i, v := range vs {
			if d, err := dec.DecodeHeader(v); err == nil {
				msg.Header[k][i] = d
			}
		}
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return nil, "", "", err
	}
	read := func(ct, cte string, body io.Reader) error {
		if strings.EqualFold(cte, "quoted-printable") {
			body = quotedprintable.NewReader(body)
		} else if strings.EqualFold(cte, "base64") {
			body = base64.NewDecoder(base64.StdEncoding, body)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		str := strings.ReplaceAll(string(b), "\r\n", "\n") // SMTP's line ends, as the reader's
		switch t, _, _ := mime.ParseMediaType(ct); t {
		case "text/plain":
			text = str
		case "text/html":
			html = str
		}
		return nil
	}
	if !strings.HasPrefix(mt, "multipart/") {
		return msg.Header, text, html, read(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, "", "", err
		}
		if err := read(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p); err != nil {
			return nil, "", "", err
		}
	}
	return msg.Header, text, html, nil
}
