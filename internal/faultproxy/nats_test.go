package faultproxy

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// setup runs a server with an echo responder on "echo" (on a direct
// connection), and a proxy in front of the server.
func setup(t *testing.T) (*natstest.Server, *Proxy) {
	t.Helper()
	s := natstest.RunServer(t)
	direct := s.Connect(t)
	if _, err := direct.Subscribe("echo", func(m *nats.Msg) { _ = m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if err := direct.Flush(); err != nil {
		t.Fatal(err)
	}
	return s, New(t, s.Addr())
}

// events counts a client's connection events.
type events struct {
	disconnects, reconnects atomic.Int32
}

func (e *events) options() []nats.Option {
	return []nats.Option{
		nats.ReconnectWait(10 * time.Millisecond),
		nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { e.disconnects.Add(1) }),
		nats.ReconnectHandler(func(*nats.Conn) { e.reconnects.Add(1) }),
	}
}

func connectVia(t *testing.T, p *Proxy, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(p.URL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func request(nc *nats.Conn, timeout time.Duration) error {
	_, err := nc.Request("echo", []byte("ping"), timeout)
	return err
}

func TestNATSCutAndRestore(t *testing.T) {
	natstest.CheckLeaks(t)
	_, p := setup(t)
	var ev events
	nc := connectVia(t, p, ev.options()...)
	if err := request(nc, 5*time.Second); err != nil {
		t.Fatalf("request through the proxy: %v", err)
	}
	if got := p.Conns(); got != 1 {
		t.Fatalf("Conns = %d, want 1", got)
	}

	p.Cut()
	natstest.WaitFor(t, 5*time.Second, func() bool { return ev.disconnects.Load() == 1 }, "client did not see the cut")
	natstest.WaitFor(t, 5*time.Second, nc.IsReconnecting, "client is not reconnecting")
	if err := request(nc, 50*time.Millisecond); err == nil {
		t.Fatal("request succeeded while cut")
	}

	p.Restore()
	natstest.WaitFor(t, 5*time.Second, func() bool { return ev.reconnects.Load() == 1 }, "client did not reconnect")
	if err := request(nc, 5*time.Second); err != nil {
		t.Fatalf("request after Restore: %v", err)
	}
}

func TestNATSBlackholeIsSilent(t *testing.T) {
	natstest.CheckLeaks(t)
	_, p := setup(t)
	var ev events
	nc := connectVia(t, p, ev.options()...)
	if err := request(nc, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	p.Blackhole()
	if err := request(nc, 200*time.Millisecond); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("request while blackholed: %v, want a timeout", err)
	}
	if !nc.IsConnected() || ev.disconnects.Load() != 0 || nc.LastError() != nil {
		t.Fatalf("client noticed the blackhole: connected=%v disconnects=%d err=%v",
			nc.IsConnected(), ev.disconnects.Load(), nc.LastError())
	}

	// Restore closes the broken connection: the client reconnects at once.
	p.Restore()
	natstest.WaitFor(t, 5*time.Second, func() bool { return ev.reconnects.Load() == 1 }, "client did not reconnect")
	if err := request(nc, 5*time.Second); err != nil {
		t.Fatalf("request after Restore: %v", err)
	}
}

func TestNATSBlackholeDetectedByPings(t *testing.T) {
	natstest.CheckLeaks(t)
	_, p := setup(t)
	var ev events
	opts := append(ev.options(), nats.PingInterval(20*time.Millisecond), nats.MaxPingsOutstanding(2))
	nc := connectVia(t, p, opts...)

	p.Blackhole()
	// The client's own pings go unanswered: it gives up on the connection,
	// and its reconnect attempts are blackholed too.
	natstest.WaitFor(t, 5*time.Second, func() bool { return ev.disconnects.Load() >= 1 }, "client never noticed the blackhole")
	if nc.IsConnected() {
		t.Fatal("client connected while blackholed")
	}
	p.Restore()
	natstest.WaitFor(t, 5*time.Second, nc.IsConnected, "client did not reconnect")
	if err := request(nc, 5*time.Second); err != nil {
		t.Fatalf("request after Restore: %v", err)
	}
}

func TestNATSStallDeliversLate(t *testing.T) {
	natstest.CheckLeaks(t)
	s, p := setup(t)
	var ev events
	nc := connectVia(t, p, ev.options()...)
	direct := s.Connect(t)
	got := make(chan string, 1)
	if _, err := direct.Subscribe("late", func(m *nats.Msg) { got <- string(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if err := direct.Flush(); err != nil {
		t.Fatal(err)
	}

	p.Stall()
	if err := nc.Publish("late", []byte("sent during the stall")); err != nil {
		t.Fatal(err)
	}
	// The PING behind the publish is held too.
	if err := nc.FlushTimeout(100 * time.Millisecond); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("flush while stalled: %v, want a timeout", err)
	}
	select {
	case m := <-got:
		t.Fatalf("%q delivered while stalled", m)
	default:
	}

	p.Restore()
	select {
	case m := <-got:
		if m != "sent during the stall" {
			t.Fatalf("got %q", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("message held during the stall never arrived")
	}
	if ev.disconnects.Load() != 0 {
		t.Fatal("client disconnected: the stall should be a delay, not a loss")
	}
}

// TestNATSClusterClientStaysBehindProxy checks that a client given only the
// proxy's URL does not learn the cluster members' real addresses, so a Cut
// really isolates it.
func TestNATSClusterClientStaysBehindProxy(t *testing.T) {
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	p := New(t, c.Server(0).Addr())
	var ev events
	nc := connectVia(t, p, ev.options()...)
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := nc.Servers(); len(got) != 1 || got[0] != p.URL() {
		t.Fatalf("client knows %v, want only %s", got, p.URL())
	}

	p.Cut()
	natstest.WaitFor(t, 5*time.Second, func() bool { return ev.disconnects.Load() == 1 }, "client did not see the cut")
	natstest.WaitFor(t, 5*time.Second, nc.IsReconnecting, "client is not reconnecting")
	p.Restore()
	natstest.WaitFor(t, 5*time.Second, nc.IsConnected, "client did not reconnect")
	if got := nc.ConnectedUrl(); got != p.URL() {
		t.Fatalf("client reconnected to %s, not through the proxy", got)
	}
}
