package natstest

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ozanturksever/go-cluster/clustertest"
)

// ClusterName is the NATS cluster name of every cluster made by RunCluster.
const ClusterName = "natstest"

// clusterReadyTimeout bounds the rejoin of a restarted member in
// Cluster.Restart.
const clusterReadyTimeout = 30 * time.Second

// Cluster is a JetStream cluster of embedded servers, joined by routes on
// 127.0.0.1, all running in this process. Members are named n0..n{size-1}
// and indexed the same way. Servers do not advertise their addresses to
// clients, so a client only ever uses the URLs it was given: one that
// connects through a fault proxy stays behind it.
type Cluster struct {
	c       *clustertest.Cluster
	servers []*Server
	routes  *routeProxies // nil unless started by RunClusterWithRouteProxies
}

// RunCluster starts size servers forming one JetStream cluster via routes
// (random ports, separate fresh temporary store dirs). It waits, up to 30s,
// until the JetStream meta leader is elected and a stream with Replicas: size
// can be created. The servers are shut down and their stores removed at test
// cleanup.
func RunCluster(t testing.TB, size int, opts ...Option) *Cluster {
	t.Helper()
	return runCluster(t, size, opts)
}

func runCluster(t testing.TB, size int, opts []Option) *Cluster {
	t.Helper()
	c, err := clustertest.StartCluster(size, append([]Option{inCluster(ClusterName)}, opts...)...)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	t.Cleanup(c.Close)
	tc := &Cluster{c: c}
	for _, s := range c.Servers() {
		tc.servers = append(tc.servers, &Server{srv: s})
	}
	return tc
}

// URLs returns the client URLs of the servers that are running.
func (c *Cluster) URLs() []string {
	return c.c.URLs()
}

// Servers returns all members, running or not, by index.
func (c *Cluster) Servers() []*Server {
	return append([]*Server(nil), c.servers...)
}

// Server returns member i.
func (c *Cluster) Server(i int) *Server {
	return c.servers[i]
}

// Connect opens a client connection to all running members (see
// [Server.Connect] for the defaults), closed at test cleanup.
func (c *Cluster) Connect(t testing.TB, opts ...nats.Option) *nats.Conn {
	t.Helper()
	return connect(t, c.c.URL(), opts)
}

// MetaLeader returns the index of the running member that leads the
// JetStream meta group, or -1 if none does.
func (c *Cluster) MetaLeader() int {
	return c.c.MetaLeader()
}

// StreamLeader returns the index of the running member leading stream in
// account, or -1 if none does or it is not known yet. Without configured
// accounts, account is "$G"; a KV bucket "b" is the stream "KV_b".
func (c *Cluster) StreamLeader(account, stream string) int {
	for i, s := range c.servers {
		if ns := s.NATS(); ns != nil && ns.JetStreamIsStreamLeader(account, stream) {
			return i
		}
	}
	return -1
}

// WaitForStreamLeader waits up to timeout for a running member to lead
// stream and returns its index; it fails the test otherwise.
func (c *Cluster) WaitForStreamLeader(t testing.TB, account, stream string, timeout time.Duration) int {
	t.Helper()
	leader := -1
	WaitFor(t, timeout, func() bool {
		leader = c.StreamLeader(account, stream)
		return leader >= 0
	}, "natstest: no leader for stream %s/%s within %v", account, stream, timeout)
	return leader
}

// Shutdown stops member i and waits for it; it is idempotent.
func (c *Cluster) Shutdown(i int) {
	c.servers[i].Shutdown()
}

// Restart starts member i again (after shutting it down if it is running) on
// the same ports and store dir, so it rejoins the cluster with its state.
// When a quorum of members is then running, it also waits up to 30s until the
// member has caught up with the JetStream meta group; without a quorum there
// is nothing to catch up with, and it returns once the server accepts
// connections.
func (c *Cluster) Restart(t testing.TB, i int) {
	t.Helper()
	c.servers[i].Restart(t)
	if !c.hasQuorum() {
		return
	}
	WaitFor(t, clusterReadyTimeout, func() bool {
		ns := c.servers[i].NATS()
		return ns != nil && ns.JetStreamIsCurrent() && c.MetaLeader() >= 0
	}, "natstest: restarted n%d did not rejoin the JetStream cluster within %v", i, clusterReadyTimeout)
}

func (c *Cluster) hasQuorum() bool {
	return len(c.URLs()) > len(c.servers)/2
}
