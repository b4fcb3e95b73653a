package faultproxy

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// echoServer is a TCP server on loopback that writes its greeting to every
// new connection, then echoes what it reads.
type echoServer struct {
	ln       net.Listener
	greeting string
	wg       sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
}

func startEcho(t *testing.T, greeting string) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{ln: ln, greeting: greeting}
	e.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.conns = append(e.conns, c)
			e.mu.Unlock()
			e.wg.Go(func() {
				defer c.Close()
				if _, err := io.WriteString(c, e.greeting); err != nil {
					return
				}
				_, _ = io.Copy(c, c)
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		e.closeConns()
		e.wg.Wait()
	})
	return e
}

func (e *echoServer) addr() string { return e.ln.Addr().String() }

// closeConns closes the server side of every connection accepted so far.
func (e *echoServer) closeConns() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.conns {
		_ = c.Close()
	}
	e.conns = nil
}

// dial connects to addr; the connection is closed at cleanup.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// readN reads exactly n bytes within 5s.
func readN(t *testing.T, c net.Conn, n int) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, n)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	return string(buf)
}

// roundTrip sends msg and expects it echoed back.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatalf("write: %v", err)
	}
	if got := readN(t, c, len(msg)); got != msg {
		t.Fatalf("echo = %q, want %q", got, msg)
	}
}

// expectClosed expects the peer to close c within 5s.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, 64)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("connection still open after 5s")
		}
		return
	}
}

// expectSilence expects nothing, not even a close, on c for d. Proving that
// nothing happens takes waiting; d is kept short.
func expectSilence(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("expected silence, got %q, %v", buf[:n], err)
	}
}
