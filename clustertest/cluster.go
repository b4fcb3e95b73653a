package clustertest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/freeport"
)

// ClusterName is the NATS cluster name of the clusters started here.
const ClusterName = "clustertest"

// readyStream is the stream StartCluster creates, then deletes, to prove
// that the cluster can place a stream replicated on every member.
const readyStream = "clustertest_ready"

// startAttempts is how many times StartCluster tries to start its members.
const startAttempts = 3

// Cluster is a JetStream cluster of servers joined by routes on 127.0.0.1,
// all running in this process. Members are named n0..n{size-1} and indexed
// the same way. Servers do not advertise their addresses to clients, so a
// client only ever uses the URLs it was given.
type Cluster struct {
	servers []*Server
}

// RunCluster starts a cluster like [StartCluster] and stops it, removing
// the store directories, at the end of the test. It fails the test if the
// cluster is not usable within 30s.
func RunCluster(tb testing.TB, size int, opts ...Option) *Cluster {
	tb.Helper()
	c, err := StartCluster(size, opts...)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// StartCluster starts size servers forming one JetStream cluster, each
// with a random client port and a fresh temporary store directory. It
// returns once the JetStream meta leader is elected, every member is
// current, and a stream with Replicas: size can be created (at most 30s).
// Call Close to stop the servers and remove their stores.
func StartCluster(size int, opts ...Option) (*Cluster, error) {
	if size < 1 {
		return nil, fmt.Errorf("clustertest: cluster size %d < 1", size)
	}
	// Route ports are reserved then released before the servers bind them,
	// so another process may take one meanwhile: try again with new ones.
	var err error
	for range startAttempts {
		var c *Cluster
		if c, err = startMembers(size, opts); err == nil {
			if err := c.waitReady(clusterReadyTimeout); err != nil {
				c.Close()
				return nil, fmt.Errorf("clustertest: cluster of %d not ready: %w", size, err)
			}
			return c, nil
		}
	}
	return nil, fmt.Errorf("clustertest: cluster of %d: %w", size, err)
}

// startMembers creates and starts the members of a new cluster; on error it
// closes those already made.
func startMembers(size int, opts []Option) (*Cluster, error) {
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
		member := func(o *server.Options) {
			o.Cluster.Name = ClusterName
			o.Cluster.Host = "127.0.0.1"
			o.Cluster.Port = ports[i]
			o.Cluster.NoAdvertise = true
			// Every member lists every route, itself included (the server
			// skips a route to itself): the number of routes is how a new
			// JetStream cluster learns its expected size.
			for _, r := range routes {
				u := *r
				o.Routes = append(o.Routes, &u)
			}
		}
		s, err := newServer(fmt.Sprintf("n%d", i), member, opts)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.servers = append(c.servers, s)
	}
	for _, s := range c.servers {
		s.life.Lock()
		err := s.launch()
		s.life.Unlock()
		if err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// URL returns the client URLs of the running members joined by commas, the
// form nats.Connect takes.
func (c *Cluster) URL() string {
	return strings.Join(c.URLs(), ",")
}

// URLs returns the client URLs of the running members, the form
// cluster.Config.NATSURLs takes.
func (c *Cluster) URLs() []string {
	var urls []string
	for _, s := range c.servers {
		if s.NATS() != nil {
			urls = append(urls, s.URL())
		}
	}
	return urls
}

// Servers returns all members, running or not, by index. Shut one down
// and restart it to test a service through the loss of a NATS server.
func (c *Cluster) Servers() []*Server {
	return append([]*Server(nil), c.servers...)
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

// Close stops every member and removes their store directories. It is
// idempotent.
func (c *Cluster) Close() {
	// All at once: one by one, each member would first try to hand its raft
	// leaderships to members about to stop as well.
	var wg sync.WaitGroup
	for _, s := range c.servers {
		wg.Go(s.Close)
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

	nc, err := nats.Connect(c.URL(), nats.Timeout(time.Until(deadline)))
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
