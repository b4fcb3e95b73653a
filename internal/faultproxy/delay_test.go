package faultproxy

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// lag is the delay the Delay tests use: long enough to tell from a loaded
// machine's scheduling noise.
const lag = 400 * time.Millisecond

func TestDelayDeliversLateInOrder(t *testing.T) {
	natstest.CheckLeaks(t)
	e := startEcho(t, "A")
	p := New(t, e.addr())
	c := dial(t, p.Addr())
	readN(t, c, 1)

	p.Delay(lag)
	sent := time.Now()
	for _, s := range []string{"one", "two", "three"} {
		if _, err := io.WriteString(c, s); err != nil {
			t.Fatal(err)
		}
	}
	expectSilence(t, c, lag/4)
	if got := readN(t, c, len("onetwothree")); got != "onetwothree" {
		t.Fatalf("got %q, want the bytes in order", got)
	}
	if took := time.Since(sent); took < lag {
		t.Fatalf("echo arrived after %v, want at least %v", took, lag)
	}

	// A connection made while delayed gets its greeting late too.
	dialled := time.Now()
	c2 := dial(t, p.Addr())
	readN(t, c2, 1)
	if took := time.Since(dialled); took < lag {
		t.Fatalf("greeting arrived after %v, want at least %v", took, lag)
	}

	// Restore: new bytes come at once.
	p.Restore()
	sent = time.Now()
	roundTrip(t, c, "prompt")
	if took := time.Since(sent); took >= lag {
		t.Fatalf("echo after Restore took %v, not prompt", took)
	}
}

func TestDelayHoldsCloseBehindBytes(t *testing.T) {
	natstest.CheckLeaks(t)
	e := startEcho(t, "A")
	p := New(t, e.addr())
	c := dial(t, p.Addr())
	readN(t, c, 1)

	p.Delay(lag)
	if _, err := io.WriteString(c, "last"); err != nil {
		t.Fatal(err)
	}
	// Let the echo reach the proxy, then close the server's side: the
	// client gets the bytes, then the close, both late.
	expectSilence(t, c, lag/4)
	closed := time.Now()
	e.closeConns()
	if got := readN(t, c, 4); got != "last" {
		t.Fatalf("got %q, want the bytes sent before the close", got)
	}
	expectClosed(t, c)
	if took := time.Since(closed); took < lag {
		t.Fatalf("close passed on after %v, want at least %v", took, lag)
	}
}

// The client's bytes are not delayed: a request lands at once.
func TestDelayOnlySlowsTheReturnPath(t *testing.T) {
	natstest.CheckLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	arrived := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s, err := ln.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		buf := make([]byte, 1)
		if _, err := io.ReadFull(s, buf); err == nil {
			arrived <- time.Now()
		}
		_, _ = io.Copy(io.Discard, s) // until the proxy closes its side
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
	p := New(t, ln.Addr().String())
	p.Delay(lag)
	c := dial(t, p.Addr())
	sent := time.Now()
	if _, err := io.WriteString(c, "x"); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-arrived:
		if took := at.Sub(sent); took >= lag {
			t.Fatalf("client's byte reached the server after %v: the forward path was delayed", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("client's byte never reached the server")
	}
	_ = c.Close()
	p.Close()
}
