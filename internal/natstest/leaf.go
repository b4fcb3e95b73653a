package natstest

import (
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// RunHub starts a standalone server like RunServer whose JetStream is in
// domain, with a leaf node listener on a random loopback port: the hub that
// RunLeaf connects leaf nodes to. Clients of a leaf reach the hub's
// JetStream with that domain ($JS.<domain>.API).
func RunHub(t testing.TB, domain string, opts ...Option) *Server {
	t.Helper()
	hub := func(o *server.Options) {
		o.ServerName = "natstest-hub"
		o.JetStreamDomain = domain
		o.LeafNode.Host = "127.0.0.1"
		o.LeafNode.Port = server.RANDOM_PORT
	}
	return RunServer(t, append([]Option{hub}, opts...)...)
}

// RunLeaf starts a server that connects to hub (started with RunHub) as a
// leaf node, on loopback, and returns once the leaf connection is up on
// both sides and the hub's JetStream API answers through it (at most 10s):
// the hub's interest in its API subjects reaches the leaf after the
// connection, and a request sent before it meets no responders, which
// nats.go reports as JetStream not enabled. The leaf has a JetStream of its own in domain,
// which must differ from the hub's: the servers then keep their JetStream
// APIs apart, and a client of the leaf reaches the hub's only through the
// hub's domain, as in a real deployment. Its leaf port is the hub's at the
// time of the call: restart the hub and the leaf reconnects only if the
// port is the same.
func RunLeaf(t testing.TB, hub *Server, domain string, opts ...Option) *Server {
	t.Helper()
	ns := hub.NATS()
	if ns == nil {
		t.Fatal("natstest: RunLeaf: the hub is not running")
	}
	vz, err := ns.Varz(nil)
	if err != nil || vz.LeafNode.Port <= 0 {
		t.Fatalf("natstest: RunLeaf: the hub has no leaf node port (start it with RunHub): %v", err)
	}
	remote := &url.URL{Scheme: "nats-leaf", Host: "127.0.0.1:" + strconv.Itoa(vz.LeafNode.Port)}
	leaf := func(o *server.Options) {
		o.ServerName = "natstest-leaf"
		o.JetStreamDomain = domain
		o.LeafNode.ReconnectInterval = 50 * time.Millisecond
		o.LeafNode.Remotes = []*server.RemoteLeafOpts{{URLs: []*url.URL{remote}}}
	}
	s := RunServer(t, append([]Option{leaf}, opts...)...)
	WaitFor(t, 10*time.Second, func() bool {
		ls, hs := s.NATS(), hub.NATS()
		return ls != nil && hs != nil && ls.NumLeafNodes() > 0 && hs.NumLeafNodes() > 0
	}, "natstest: the leaf did not connect to the hub")
	api := "$JS." + ns.JetStreamConfig().Domain + ".API.INFO"
	nc := s.Connect(t)
	defer nc.Close()
	WaitFor(t, 10*time.Second, func() bool {
		_, err := nc.Request(api, nil, time.Second)
		return err == nil
	}, "natstest: the hub's JetStream does not answer through the leaf")
	return s
}
