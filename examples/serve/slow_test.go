package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowClient sends a request of body b on its own connection to addr:
// the headers, then pad spaces one every gap until release is closed
// (or the padding runs out), then the rest at once; started is called
// once it has sent some of its body. It returns the status and body of
// the answer.
func slowClient(addr string, b []byte, pad int, gap time.Duration, started func(), release <-chan struct{}) (int, string, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", pad+len(b)); err != nil {
		return 0, "", err
	}
	sent := 0
	for ; sent < pad; sent++ {
		if sent == 5 {
			started()
		}
		select {
		case <-release:
		case <-time.After(gap):
			if _, err := c.Write([]byte{' '}); err != nil {
				return 0, "", err
			}
			continue
		}
		break
	}
	if sent < 5 {
		started()
	}
	if _, err := c.Write(append([]byte(strings.Repeat(" ", pad-sent)), b...)); err != nil {
		return 0, "", err
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out), err
}

// TestSlowClientsHoldNoSlot is the regression test of slow clients
// shutting scoring out: a request took its -max-pending slot before its
// body was read, so that clients sending a byte a second held every
// slot. Here -max-pending 2 and 6 clients send their bodies a byte at a
// time; a normal request sent meanwhile must be answered before any of
// them has finished sending (and their requests are answered after).
func TestSlowClientsHoldNoSlot(t *testing.T) {
	f := getFixture(t)
	s, srv, _ := f.open(t, filepath.Join(t.TempDir(), "serve.log"), "-max-pending", "2", "-body-timeout", "5m")
	defer stop(t, s, srv)
	addr := srv.Listener.Addr().String()
	const slow, pad = 6, 1000 // 1000 bytes 20 ms apart: 20 s at most
	rng := rand.New(rand.NewSource(9))
	release := make(chan struct{})
	finished := make(chan struct{}) // closed when the first slow client has sent its whole body
	var once sync.Once
	var started, wg sync.WaitGroup
	type result struct {
		status int
		body   string
		err    error
	}
	results := make([]result, slow)
	started.Add(slow)
	for k := 0; k < slow; k++ {
		b := body(f.newNode(fmt.Sprintf("slow%d", k), rng.Intn(1000), rng, "n1"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, out, err := slowClient(addr, b, pad, 20*time.Millisecond, started.Done, release)
			once.Do(func() { close(finished) })
			results[k] = result{st, out, err}
		}()
	}
	started.Wait()
	answered := make(chan result, 1)
	go func() {
		st, out, _, err := post(srv.Client(), srv.URL, body(f.newNode("quick", 5, rng, "n2")))
		answered <- result{st, string(out), err}
	}()
	select {
	case r := <-answered:
		require.NoError(t, r.err)
		assert.Equal(t, http.StatusOK, r.status, r.body)
	case <-finished:
		t.Error("the normal request was not answered while the slow clients were sending")
		<-answered
	}
	close(release)
	wg.Wait()
	for k, r := range results {
		require.NoError(t, r.err)
		assert.Equal(t, http.StatusOK, r.status, "slow client %d: %s", k, r.body)
	}
}

// TestBodyTimeout: a body that does not arrive within -body-timeout is
// answered 408 naming the flag.
func TestBodyTimeout(t *testing.T) {
	f := getFixture(t)
	s, srv, _ := f.open(t, filepath.Join(t.TempDir(), "serve.log"), "-body-timeout", "200ms")
	defer stop(t, s, srv)
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "POST /score HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"nodes\":")
	require.NoError(t, err)
	c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode, string(b))
	assert.Contains(t, string(b), "body: not received within -body-timeout 200ms (9 bytes came)")
}

// TestConnsPerClient: a client holding -max-conns-per-client connections
// is answered 429 on another, naming the flag; once one closes, it is
// served again.
func TestConnsPerClient(t *testing.T) {
	f := getFixture(t)
	s, srv, _ := f.open(t, filepath.Join(t.TempDir(), "serve.log"), "-max-conns-per-client", "3")
	defer stop(t, s, srv)
	addr := srv.Listener.Addr().String()
	lim := srv.Listener.(*clientLimit)
	var held []net.Conn
	for k := 0; k < 3; k++ {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		held = append(held, c)
	}
	require.Eventually(t, func() bool { return lim.count("127.0.0.1") == 3 }, time.Minute, 5*time.Millisecond)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	b := body(f.newNode("a", 1, nil, "n1"))
	_, err = fmt.Fprintf(c, "POST /score HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
	require.NoError(t, err)
	c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	var e apiError
	decode(t, out, &e)
	assert.Equal(t, "connection", e.Field)
	assert.Contains(t, e.Msg, "more than -max-conns-per-client 3 connections open from 127.0.0.1")
	assert.Equal(t, 0, s.st.accepted())

	held[0].Close()
	require.Eventually(t, func() bool { return lim.count("127.0.0.1") == 2 }, time.Minute, 5*time.Millisecond)
	status, ans, _, err := post(&http.Client{}, srv.URL, b)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status, string(ans))
	for _, c := range held[1:] {
		c.Close()
	}
}

// TestSixtyFourSlowClients is the case at its own numbers, with
// the default flags: 64 connections from one client (127.0.0.2) send
// their bodies a byte every 20 ms; a request from another client
// (127.0.0.1) is answered before any of them has run out of padding
// (20 s). Before, each slow connection took a -max-pending slot (64)
// before its body was read, and the request waited for them.
func TestSixtyFourSlowClients(t *testing.T) {
	if testing.Short() {
		t.Skip("64 connections for up to 20 s; skipped with -short")
	}
	f := getFixture(t)
	s, srv, _ := f.open(t, filepath.Join(t.TempDir(), "serve.log"))
	defer stop(t, s, srv)
	addr := srv.Listener.Addr().String()
	const slow, pad, gap = 64, 1000, 20 * time.Millisecond
	dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	release, ranOut := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var wg, started sync.WaitGroup
	rng := rand.New(rand.NewSource(11))
	started.Add(slow)
	for k := 0; k < slow; k++ {
		b := body(f.newNode(fmt.Sprintf("slow%d", k), rng.Intn(1000), rng, "n1"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialer.Dial("tcp", addr)
			if err != nil {
				started.Done()
				t.Errorf("slow client %d: %v", k, err)
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", pad+len(b))
			started.Done()
			for sent := 0; sent < pad; sent++ {
				select {
				case <-release:
					return
				case <-time.After(gap):
				}
				if _, err := c.Write([]byte{' '}); err != nil {
					return // refused (429 past -max-conns-per-client) and closed
				}
			}
			once.Do(func() { close(ranOut) })
		}()
	}
	started.Wait()
	answered := make(chan error, 1)
	go func() {
		st, out, _, err := post(srv.Client(), srv.URL, body(f.newNode("quick", 5, rng, "n2")))
		if err == nil && st != http.StatusOK {
			err = fmt.Errorf("status %d: %s", st, out)
		}
		answered <- err
	}()
	select {
	case err := <-answered:
		assert.NoError(t, err)
	case <-ranOut:
		t.Error("the request from another client was not answered while 64 slow clients were sending")
		<-answered
	}
	close(release)
	wg.Wait()
}
