package natstest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/freeport"
)

// ClusterName is the NATS cluster name of every cluster made by RunCluster.
const ClusterName = "natstest"

// clusterReadyTimeout bounds cluster formation in RunCluster and the rejoin
// of a restarted member in Cluster.Restart.
const clusterReadyTimeout = 30 * time.Second

// readyStream is the stream RunCluster creates (and deletes) to prove the
// cluster can place a replicated stream.
const readyStream = "natstest_ready"

// Cluster is a JetStream cluster of embedded servers, joined by routes on
// 127.0.0.1, all running in this process. Members are named n0..n{size-1}
// and indexed the same way. Servers do not advertise their addresses to
// clients (Cluster.NoAdvertise), so a client only ever uses the URLs it was
// given: one that connects through a fault proxy stays behind it.
type Cluster struct {
	servers []*Server
}

// RunCluster starts size servers forming one JetStream cluster via routes
// (random ports, separate store dirs under t.TempDir()). It waits, up to 30s,
// until the JetStream meta leader is elected and a stream with Replicas: size
// can be created. The servers are shut down at test cleanup.
func RunCluster(t testing.TB, size int, opts ...Option) *Cluster {
	t.Helper()
	if size < 1 {
		t.Fatalf("natstest: cluster size %d < 1", size)
	}
	// Route ports are reserved then released before the servers bind them,
	// so another process may take one meanwhile: try again with new ones.
	var err error
	for range startAttempts {
		var c *Cluster
		if c, err = startCluster(t, size, opts); err == nil {
			t.Cleanup(c.shutdownAll)
			if err := c.waitReady(clusterReadyTimeout); err != nil {
				t.Fatalf("natstest: cluster of %d not ready: %v", size, err)
			}
			return c
		}
	}
	t.Fatalf("natstest: cluster of %d: %v", size, err)
	return nil
}

// startAttempts is how many times RunCluster tries to start its members.
const startAttempts = 3

// startCluster creates and starts the members of a new cluster; on error it
// shuts down those already started.
func startCluster(t testing.TB, size int, opts []Option) (*Cluster, error) {
	ports, err := freeport.Reserve(size)
	if err != nil {
		return nil, err
	}
	routes := make([]*url.URL, size)
	for i, p := range ports {
		routes[i] = &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", p)}
	}

	c := &Cluster{}
	for i := range size {
		o := baseOptions(fmt.Sprintf("n%d", i), t.TempDir())
		o.Cluster.Name = ClusterName
		o.Cluster.Host = "127.0.0.1"
		o.Cluster.Port = ports[i]
		o.Cluster.NoAdvertise = true
		// Every member lists every route, itself included (the server skips a
		// route to itself): the number of routes is how a new JetStream
		// cluster learns its expected size.
		for _, r := range routes {
			u := *r
			o.Routes = append(o.Routes, &u)
		}
		applyOptions(o, opts)
		c.servers = append(c.servers, &Server{clustered: true, opts: o})
	}
	for _, s := range c.servers {
		s.life.Lock()
		err := s.start()
		s.life.Unlock()
		if err != nil {
			c.shutdownAll()
			return nil, err
		}
	}
	return c, nil
}

// URLs returns the client URLs of the servers that are running.
func (c *Cluster) URLs() []string {
	var urls []string
	for _, s := range c.servers {
		if s.NATS() != nil {
			urls = append(urls, s.URL())
		}
	}
	return urls
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
	return connect(t, strings.Join(c.URLs(), ","), opts)
}

// MetaLeader returns the index of the running member that leads the
// JetStream meta group, or -1 if none does.
func (c *Cluster) MetaLeader() int {
	for i, s := range c.servers {
		if ns := s.NATS(); ns != nil && ns.JetStreamIsLeader() {
			return i
		}
	}
	return -1
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

// shutdownAll stops every member at once; one by one, each would first try
// to hand its raft leaderships to members about to stop as well.
func (c *Cluster) shutdownAll() {
	var wg sync.WaitGroup
	for _, s := range c.servers {
		wg.Go(s.Shutdown)
	}
	wg.Wait()
}

// waitReady waits until a meta leader is elected, every member is current,
// and a stream replicated on every member can be created.
func (c *Cluster) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	ok := poll(timeout, func() bool {
		if c.MetaLeader() < 0 {
			return false
		}
		for _, s := range c.servers {
			if ns := s.NATS(); ns == nil || !ns.JetStreamIsCurrent() {
				return false
			}
		}
		return true
	})
	if !ok {
		return fmt.Errorf("no JetStream meta leader with all members current within %v", timeout)
	}

	nc, err := nats.Connect(strings.Join(c.URLs(), ","), nats.Timeout(time.Until(deadline)))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	cfg := jetstream.StreamConfig{Name: readyStream, Replicas: len(c.servers), Storage: jetstream.FileStorage}
	var lastErr error
	ok = poll(time.Until(deadline), func() bool {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		defer acancel()
		_, lastErr = js.CreateOrUpdateStream(actx, cfg)
		return lastErr == nil
	})
	if !ok {
		return fmt.Errorf("cannot create an R%d stream: %w", len(c.servers), lastErr)
	}
	if err := js.DeleteStream(ctx, readyStream); err != nil {
		return fmt.Errorf("delete %s: %w", readyStream, err)
	}
	return nil
}
