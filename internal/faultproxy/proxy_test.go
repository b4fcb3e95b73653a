package faultproxy

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

const silence = 100 * time.Millisecond

func TestForwards(t *testing.T) {
	natstest.CheckLeaks(t)
	e := startEcho(t, "A")
	p := New(t, e.addr())
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") || p.URL() != "nats://"+p.Addr() {
		t.Fatalf("Addr %q URL %q", p.Addr(), p.URL())
	}
	c := dial(t, p.Addr())
	if got := readN(t, c, 1); got != "A" {
		t.Fatalf("greeting %q", got)
	}
	roundTrip(t, c, "hello")
	big := strings.Repeat("0123456789", 20000)
	roundTrip(t, c, big)
	if got := p.Conns(); got != 1 {
		t.Fatalf("Conns = %d, want 1", got)
	}
	_ = c.Close()
	natstest.WaitFor(t, 5*time.Second, func() bool { return p.Conns() == 0 }, "Conns = %d after close", p.Conns())
}

func TestServerCloseIsPassedOn(t *testing.T) {
	natstest.CheckLeaks(t)
	e := startEcho(t, "A")
	p := New(t, e.addr())
	c := dial(t, p.Addr())
	readN(t, c, 1)
	e.closeConns()
	expectClosed(t, c)
}

func TestCutAndRestore(t *testing.T) {
	natstest.CheckLeaks(t)
	e := startEcho(t, "A")
	p := New(t, e.addr())
	c := dial(t, p.Addr())
	readN(t, c, 1)

	p.Cut()
	expectClosed(t, c)
	natstest.WaitFor(t, 5*time.Second, func() bool { return p.Conns() == 0 }, "Conns = %d after Cut", p.Conns())

	// New connections are closed at once.
	c2 := dial(t, p.Addr())
	expectClosed(t, c2)

	p.Restore()
	c3 := dial(t, p.Addr())
	readN(t, c3, 1)
	roundTrip(t, c3, "back")
}

func TestBlackholeIsSilent(t *testing.T) {
	natstest.CheckLeaks(t)
	e := startEcho(t, "A")
	p := New(t, e.addr())
	c := dial(t, p.Addr())
	readN(t, c, 1)
	roundTrip(t, c, "before")

	p.Blackhole()
	if _, err := io.WriteString(c, "lost"); err != nil {
		t.Fatal(err)
	}
	expectSilence(t, c, silence)
	// Not even the server closing its side gets through.
	e.closeConns()
	expectSilence(t, c, silence)

	// New connections are accepted, and silent.
	c2 := dial(t, p.Addr())
	expectSilence(t, c2, silence)
	if got := p.Conns(); got != 2 {
		t.Fatalf("Conns = %d, want 2", got)
	}

	// Restore closes the connections that lost bytes; new ones work.
	p.Restore()
	expectClosed(t, c)
	expectClosed(t, c2)
	c3 := dial(t, p.Addr())
	readN(t, c3, 1)
	roundTrip(t, c3, "after")
	natstest.WaitFor(t, 5*time.Second, func() bool { return p.Conns() == 1 }, "Conns = %d after Restore", p.Conns())
}

func TestBlackholeWithoutTrafficKeepsConnection(t *testing.T) {
	natstest.CheckLeaks(t)
	e := startEcho(t, "A")
	p := New(t, e.addr())
	c := dial(t, p.Addr())
	readN(t, c, 1)
	p.Blackhole()
	p.Restore()
	// Nothing was dropped, so the connection is intact.
	roundTrip(t, c, "intact")
}

func TestStallHoldsThenDelivers(t *testing.T) {
	natstest.CheckLeaks(t)
	e := startEcho(t, "A")
	p := New(t, e.addr())
	c := dial(t, p.Addr())
	readN(t, c, 1)

	p.Stall()
	if _, err := io.WriteString(c, "late"); err != nil {
		t.Fatal(err)
	}
	expectSilence(t, c, silence)
	// A connection made while stalled waits too.
	c2 := dial(t, p.Addr())
	expectSilence(t, c2, silence)

	p.Restore()
	if got := readN(t, c, 4); got != "late" {
		t.Fatalf("after Restore got %q, want %q", got, "late")
	}
	roundTrip(t, c, "still works")
	readN(t, c2, 1)
	roundTrip(t, c2, "new one too")
}

func TestStallHoldsClose(t *testing.T) {
	natstest.CheckLeaks(t)
	e := startEcho(t, "A")
	p := New(t, e.addr())
	c := dial(t, p.Addr())
	readN(t, c, 1)
	p.Stall()
	e.closeConns()
	expectSilence(t, c, silence)
	p.Restore()
	expectClosed(t, c)
}

func TestSetTarget(t *testing.T) {
	natstest.CheckLeaks(t)
	a, b := startEcho(t, "A"), startEcho(t, "B")
	p := New(t, a.addr())
	ca := dial(t, p.Addr())
	if got := readN(t, ca, 1); got != "A" {
		t.Fatalf("first connection reached %q, want A", got)
	}
	p.SetTarget(b.addr())
	cb := dial(t, p.Addr())
	if got := readN(t, cb, 1); got != "B" {
		t.Fatalf("connection after SetTarget reached %q, want B", got)
	}
	roundTrip(t, ca, "still on A")
}

func TestUnreachableTarget(t *testing.T) {
	natstest.CheckLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	p := New(t, addr)
	c := dial(t, p.Addr())
	expectClosed(t, c)
	natstest.WaitFor(t, 5*time.Second, func() bool { return p.Conns() == 0 }, "Conns = %d", p.Conns())
}

func TestCloseEndsEverything(t *testing.T) {
	natstest.CheckLeaks(t)
	e := startEcho(t, "A")
	p := New(t, e.addr())

	fwd := dial(t, p.Addr())
	readN(t, fwd, 1)
	p.Blackhole()
	holed := dial(t, p.Addr())
	if _, err := io.WriteString(holed, "x"); err != nil {
		t.Fatal(err)
	}
	p.Stall()
	stalled := dial(t, p.Addr())
	if _, err := io.WriteString(fwd, "held"); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return p.Conns() == 3 }, "Conns = %d, want 3", p.Conns())

	p.Close()
	p.Close()
	for _, c := range []net.Conn{fwd, holed, stalled} {
		expectClosed(t, c)
	}
	if got := p.Conns(); got != 0 {
		t.Fatalf("Conns = %d after Close", got)
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Fatal("proxy still accepts after Close")
	}
	// Mode changes after Close are harmless.
	p.Cut()
	p.Blackhole()
	p.Stall()
	p.Restore()
}

// TestConcurrentUse flips modes while clients talk, for the race detector.
func TestConcurrentUse(t *testing.T) {
	natstest.CheckLeaks(t)
	e := startEcho(t, "A")
	p := New(t, e.addr())

	stop := make(chan struct{})
	var dials atomic.Int64
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			msg := fmt.Sprintf("client-%d", i)
			buf := make([]byte, 64)
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
				dials.Add(1)
				if err != nil {
					continue
				}
				_ = c.SetDeadline(time.Now().Add(20 * time.Millisecond))
				_, _ = io.WriteString(c, msg)
				_, _ = c.Read(buf)
				_ = c.Close()
				_ = p.Conns()
			}
		})
	}
	modes := []func(){p.Cut, p.Blackhole, p.Stall, p.Restore}
	for i := range 200 {
		// Let some traffic happen in every mode.
		n := dials.Load()
		natstest.WaitFor(t, 5*time.Second, func() bool { return dials.Load() > n }, "clients stuck")
		modes[i%len(modes)]()
		if i%10 == 0 {
			p.SetTarget(e.addr())
		}
	}
	p.Restore()
	close(stop)
	wg.Wait()
	natstest.WaitFor(t, 5*time.Second, func() bool { return p.Conns() == 0 }, "Conns = %d after clients left", p.Conns())
}
