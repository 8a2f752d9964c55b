package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// clientLimit is a listener that lets each client (a remote IP address)
// hold at most max connections at once: a connection beyond them is
// answered 429 at once and closed, so that one client cannot hold every
// connection the service reads bodies on. Behind a reverse proxy every
// client is the proxy's address.
type clientLimit struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open map[string]int
}

func newClientLimit(ln net.Listener, max int) *clientLimit {
	return &clientLimit{Listener: ln, max: max, open: map[string]int{}}
}

func (l *clientLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := c.RemoteAddr().String()
		if host, _, err := net.SplitHostPort(ip); err == nil {
			ip = host
		}
		l.mu.Lock()
		if l.open[ip] >= l.max {
			l.mu.Unlock()
			go l.refuse(c, ip)
			continue
		}
		l.open[ip]++
		l.mu.Unlock()
		lc := &limitedConn{Conn: c}
		lc.release = sync.OnceFunc(func() {
			l.mu.Lock()
			if l.open[ip]--; l.open[ip] == 0 {
				delete(l.open, ip)
			}
			l.mu.Unlock()
		})
		return lc, nil
	}
}

// count returns the connections ip holds.
func (l *clientLimit) count(ip string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[ip]
}

// refuse answers a connection over the cap 429 and closes it; it reads
// what the client sends for a moment first, so that closing does not
// reset the connection before the client reads the answer.
func (l *clientLimit) refuse(c net.Conn, ip string) {
	defer c.Close()
	msg := fmt.Sprintf("connection: more than -max-conns-per-client %d connections open from %s; reuse a connection (keep-alive), wait for one to finish, or start serve with a larger -max-conns-per-client", l.max, ip)
	b, _ := json.Marshal(apiError{Field: "connection", Msg: msg})
	c.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %s\r\n\r\n%s\n",
		http.StatusTooManyRequests, http.StatusText(http.StatusTooManyRequests), strconv.Itoa(len(b)+1), b)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// limitedConn gives its client's slot back when it closes.
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	c.release()
	return c.Conn.Close()
}

// configure sets the HTTP server's limits: headers within 10 s, a body
// within -body-timeout of its request's start (handleScore sets the
// deadline; ReadTimeout is the backstop for the other endpoints).
func (s *service) configure(srv *http.Server) {
	srv.Handler = s.handler()
	srv.ReadHeaderTimeout = headerTimeout
	srv.ReadTimeout = headerTimeout + s.o.bodyTimeout
	srv.IdleTimeout = 2 * time.Minute
	srv.MaxHeaderBytes = 64 << 10
}

const headerTimeout = 10 * time.Second
