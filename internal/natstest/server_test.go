package natstest

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestServerRestartKeepsKV(t *testing.T) {
	CheckLeaks(t)
	s := RunServer(t)
	addr := s.Addr()
	if s.URL() != "nats://"+addr {
		t.Fatalf("URL %q does not match Addr %q", s.URL(), addr)
	}

	nc := s.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx(t, 5*time.Second), jetstream.KeyValueConfig{Bucket: "cluster-x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx(t, 5*time.Second), "lease", []byte("epoch-7")); err != nil {
		t.Fatal(err)
	}

	first := s.NATS()
	s.Restart(t)
	if s.Addr() != addr {
		t.Fatalf("restart moved the server from %s to %s", addr, s.Addr())
	}
	if s.NATS() == first || s.NATS() == nil {
		t.Fatal("restart did not start a new server instance")
	}

	// The client reconnects on its own; the value must have survived.
	var got []byte
	WaitFor(t, 10*time.Second, func() bool {
		e, err := kv.Get(ctx(t, time.Second), "lease")
		if err != nil {
			return false
		}
		got = e.Value()
		return true
	}, "bucket not readable after restart")
	if string(got) != "epoch-7" {
		t.Fatalf("after restart lease = %q, want %q", got, "epoch-7")
	}
}

func TestServerShutdownIsIdempotent(t *testing.T) {
	CheckLeaks(t)
	s := RunServer(t)
	nc := s.Connect(t, nats.MaxReconnects(0))
	s.Shutdown()
	s.Shutdown()
	if s.NATS() != nil {
		t.Fatal("NATS() should be nil while shut down")
	}
	WaitFor(t, 5*time.Second, nc.IsClosed, "client did not notice the shutdown")

	// Restart from the shut-down state works too.
	s.Restart(t)
	if s.NATS() == nil {
		t.Fatal("NATS() is nil after restart")
	}
	s.Connect(t)
}

func TestWithOptions(t *testing.T) {
	CheckLeaks(t)
	s := RunServer(t, WithOptions(func(o *server.Options) { o.MaxPayload = 4096 }))
	nc := s.Connect(t)
	if got := nc.MaxPayload(); got != 4096 {
		t.Fatalf("MaxPayload = %d, want 4096", got)
	}
	// The options are kept across a restart.
	s.Restart(t)
	if got := s.Connect(t).MaxPayload(); got != 4096 {
		t.Fatalf("after restart MaxPayload = %d, want 4096", got)
	}
}

func TestRunServerReportsStartFailure(t *testing.T) {
	CheckLeaks(t)
	s := RunServer(t)
	port := s.NATS().Addr().(*net.TCPAddr).Port

	// A second server on the same port cannot listen: it must fail fast with
	// the reason, not hang until the readiness timeout.
	f := &fakeTB{TB: t}
	start := time.Now()
	f.run(func() {
		RunServer(f, WithOptions(func(o *server.Options) { o.Port = port }))
	})
	f.runCleanups()
	if len(f.failures) != 1 || !strings.Contains(f.failures[0], "listen") {
		t.Fatalf("failures = %q, want one about listening", f.failures)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("start failure took %v to report", d)
	}
}
