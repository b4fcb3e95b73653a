package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// rollingCluster is a cluster whose nodes are replaced one at a time,
// under a sampler of its leaders every 10 ms and a stream of fenced
// writes (issue 42).
type rollingCluster struct {
	t   *testing.T
	rec *recorder
	cfg func(name string, hi int) Config

	mu    sync.Mutex
	nodes map[string]*Node

	stop       context.CancelFunc
	done       sync.WaitGroup
	twoLeaders string        // the first sample with two leaders
	stranded   string        // the first sample of a node not ready for the protocol before the downgrade
	downgrade  bool          // a node of this build runs in a cluster that moved on: its Ready fails
	maxGap     time.Duration // the longest leaderless time sampled
	acked      []string      // the keys of fenced writes acknowledged
	refusedOK  int           // writes refused with ErrNotLeader: a stale tenure's, as they must be
	stream     []streamMsg   // the bucket's stream, read in order (followStream)
}

func (c *rollingCluster) current() []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ns []*Node
	for _, n := range c.nodes {
		ns = append(ns, n)
	}
	return ns
}

// run starts the sampler and the writer.
func (c *rollingCluster) run() {
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	c.done.Add(2)
	go func() { // the sampler
		defer c.done.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		led := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				var leaders []string
				c.mu.Lock()
				downgrade := c.downgrade
				c.mu.Unlock()
				for _, n := range c.current() {
					if n.IsLeader() {
						leaders = append(leaders, n.Config().NodeID)
					}
					if err := n.Ready(); !downgrade && errors.Is(err, ErrProtocolVersion) && c.stranded == "" {
						c.stranded = fmt.Sprintf("%s at %v: %v", n.Config().NodeID, now.Format(time.StampMicro), err)
					}
				}
				switch {
				case len(leaders) > 1 && c.twoLeaders == "":
					c.twoLeaders = fmt.Sprintf("%v at %v", leaders, now.Format(time.StampMicro))
				case len(leaders) == 1:
					led = now
				}
				c.maxGap = max(c.maxGap, now.Sub(led))
			}
		}
	}()
	go func() { // the writer: one fenced write every 20 ms, by whichever node leads
		defer c.done.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for k := 0; ; k++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, n := range c.current() {
				if !n.IsLeader() {
					continue
				}
				key := fmt.Sprintf("w-%d", k)
				wctx, cancel := context.WithTimeout(ctx, time.Second)
				_, err := n.State().Put(wctx, key, []byte(n.Config().NodeID))
				cancel()
				switch {
				case err == nil:
					c.acked = append(c.acked, key)
				case errors.Is(err, ErrNotLeader):
					c.refusedOK++
				}
			}
		}
	}()
}

// replace stops name's node and starts one that speaks up to hi in its
// place, and waits until it follows.
func (c *rollingCluster) replace(name string, hi int) *Node {
	c.t.Helper()
	c.mu.Lock()
	old := c.nodes[name]
	c.mu.Unlock()
	stopNode(c.t, old)
	n := startNode(c.t, c.cfg(name, hi), c.rec, nil)
	c.mu.Lock()
	c.nodes[name] = n
	c.mu.Unlock()
	natstest.WaitFor(c.t, 10*time.Second, func() bool {
		return n.Leader() != "" || errors.Is(n.Ready(), ErrProtocolVersion) // a record it cannot read names no leader to it
	}, "%s (protocol up to %d) did not find the leader", name, hi)
	return n
}

// leading waits until one node leads, and returns it.
func (c *rollingCluster) leading(timeout time.Duration) *Node {
	c.t.Helper()
	var leader *Node
	natstest.WaitFor(c.t, timeout, func() bool {
		leader = nil
		for _, n := range c.current() {
			if n.IsLeader() {
				if leader != nil {
					return false
				}
				leader = n
			}
		}
		return leader != nil
	}, "no one leader")
	return leader
}

// check stops the sampler and the writer and checks what they saw: one
// leader at a time, never leaderless for a lease's wait, every
// acknowledged write kept.
func (c *rollingCluster) check() {
	c.t.Helper()
	c.stop()
	c.done.Wait()
	c.t.Logf("%d fenced writes acknowledged, %d refused as not the leader's; longest leaderless %v", len(c.acked), c.refusedOK, c.maxGap)
	if c.twoLeaders != "" {
		c.t.Errorf("two leaders sampled: %s", c.twoLeaders)
	}
	if c.stranded != "" {
		c.t.Errorf("the cluster moved before every member spoke the next protocol: %s", c.stranded)
	}
	// A graceful handover takes milliseconds; a lease waited out takes
	// LeaseTTL (3s here).
	if c.maxGap >= 3*time.Second {
		c.t.Errorf("leaderless for %v: a lease was waited out, not handed over", c.maxGap)
	}
	leader := waitOneLeader(c.t, c.current(), 15*time.Second)
	for _, key := range c.acked {
		// A timeout per read: hundreds of them under one took more than
		// 10s on a loaded machine (CI, -race).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := leader.State().Get(ctx, key)
		cancel()
		if err != nil {
			c.t.Errorf("fenced write %s was acknowledged and is gone: %v", key, err)
		}
	}
	if len(c.acked) < 50 {
		c.t.Errorf("only %d fenced writes acknowledged", len(c.acked))
	}
	c.checkWritesWithinTheirTenure(leader.Config().ClusterID)
	c.rec.check(c.t) // tenures never overlap, epochs grow
}

// followStream reads the bucket's stream in order from its first message,
// on a connection of its own, for checkWritesWithinTheirTenure. The lease
// key keeps a few revisions; read live, none is missed.
func (c *rollingCluster) followStream(urls []string, clusterID string) {
	c.t.Helper()
	nc, err := nats.Connect(strings.Join(urls, ","))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		c.t.Fatal(err)
	}
	cons, err := js.OrderedConsumer(ctx(c.t), wire.KVStream(wire.BucketName(clusterID)), jetstream.OrderedConsumerConfig{})
	if err != nil {
		c.t.Fatal(err)
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		meta, err := msg.Metadata()
		if err != nil {
			return
		}
		c.mu.Lock()
		c.stream = append(c.stream, streamMsg{seq: meta.Sequence.Stream, subject: msg.Subject(), data: msg.Data(), header: msg.Headers()})
		c.mu.Unlock()
	})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cc.Stop)
}

// streamMsg is a message of the bucket's stream as followStream read it.
type streamMsg struct {
	seq     uint64
	subject string
	data    []byte
	header  nats.Header
}

// checkWritesWithinTheirTenure goes through the stream in order: every
// fenced write must come after a held lease record of its own epoch with
// no other lease record between them, so that none was accepted from a
// tenure that had ended. After a gap in what was read (a record replaced
// before it was read), writes are judged from the next lease record on.
func (c *rollingCluster) checkWritesWithinTheirTenure(clusterID string) {
	c.t.Helper()
	c.mu.Lock()
	msgs := c.stream
	c.mu.Unlock()
	leaseSubject := "$KV." + wire.BucketName(clusterID) + "." + wire.LeaseKey
	held, known := int64(0), false // the epoch of the last lease record if held; 0: released or gone
	judged, last := 0, uint64(0)
	for _, m := range msgs {
		if last != 0 && m.seq != last+1 {
			known = false
		}
		last = m.seq
		switch {
		case m.subject == leaseSubject:
			held, known = 0, true
			if l, err := wire.DecodeLease(m.data, m.seq); err == nil && !l.IsReleased() && m.header.Get("KV-Operation") == "" {
				held = l.Epoch
			}
		case m.header.Get(fenced.EpochHeader) != "" && known:
			judged++
			if epoch := m.header.Get(fenced.EpochHeader); epoch != strconv.FormatInt(held, 10) {
				c.t.Errorf("the fenced write at revision %d (%s) carries epoch %s; the lease then was held at epoch %d (0: by nobody)", m.seq, m.subject, epoch, held)
			}
		}
	}
	c.t.Logf("%d messages of the stream read, %d fenced writes judged against the lease record before them", len(msgs), judged)
	if judged < len(c.acked)/2 {
		c.t.Errorf("only %d fenced writes could be judged of %d acknowledged", judged, len(c.acked))
	}
}

// TestRollingUpgradeMovesTheClusterToTheNextProtocol: three nodes of
// this build replaced one at a time by nodes that speak the next
// protocol too, under fenced writes: one leader at a time, no lease
// waited out, every acknowledged write kept, and the cluster runs the
// next protocol once every member speaks it, at one epoch's renewal.
// A node put back before the switch changes nothing; one put back after
// it follows, not ready, and leads nothing.
func TestRollingUpgradeMovesTheClusterToTheNextProtocol(t *testing.T) {
	t.Parallel()
	t.Run("OneServer", func(t *testing.T) {
		t.Parallel()
		srv, rec, id := setup(t)
		rollingUpgrade(t, rec, func(name string) Config { return stableConfig(id, name, srv.URL()) })
	})
	t.Run("ThreeServersR3", func(t *testing.T) {
		t.Parallel()
		natstest.CheckLeaks(t)
		c, rec, id := natstest.RunCluster(t, 3), newRecorder(), uniqueClusterID(t)
		rollingUpgrade(t, rec, func(name string) Config {
			cfg := stableConfig(id, name, c.URLs()...)
			cfg.Bucket.Replicas = 3
			return cfg
		})
	})
}

func rollingUpgrade(t *testing.T, rec *recorder, config func(name string) Config) {
	next := wire.ProtocolHi + 1
	c := &rollingCluster{t: t, rec: rec, nodes: map[string]*Node{}, cfg: func(name string, hi int) Config {
		cfg := config(name)
		cfg.protocolHi = hi
		return cfg
	}}
	for _, name := range []string{"a", "b", "c"} {
		c.nodes[name] = startNode(t, c.cfg(name, 0), rec, nil)
	}
	first := waitOneLeader(t, c.current(), 15*time.Second)
	c.followStream(first.Config().NATSURLs, first.Config().ClusterID)
	c.run()
	order := []string{"a", "b", "c"}
	for i, name := range order { // the leader second: one handover
		if name == first.Config().NodeID {
			order[i], order[1] = order[1], order[i]
		}
	}
	c.replace(order[0], next)
	c.replace(order[0], 0) // a rolling downgrade before the switch: nothing to undo
	for _, name := range order {
		c.replace(name, next)
		// An operator's pace: a node at a time, a lease's time apart,
		// so that the leader's once-a-TTL Confirm reads the members
		// between replacements.
		select {
		case <-time.After(4 * time.Second):
		case <-t.Context().Done():
		}
	}
	natstest.WaitFor(t, 10*time.Second, func() bool {
		l, ok := c.current()[0].Lease()
		return ok && l.Version == next
	}, "every node speaks protocol %d, and the cluster does not run it", next)
	c.check()

	// After the switch, a node of this build follows and says why.
	c.mu.Lock()
	c.downgrade = true
	c.mu.Unlock()
	old := c.replace(order[0], 0)
	natstest.WaitFor(t, 10*time.Second, func() bool { return errors.Is(old.Ready(), ErrProtocolVersion) },
		"a node of protocol %d in a cluster of %d: Ready() = %v, want ErrProtocolVersion", wire.ProtocolHi, next, old.Ready())
	leader := c.leading(15 * time.Second)
	stopNode(t, leader) // a handover: only the other node of the next version may take it
	c.mu.Lock()
	delete(c.nodes, leader.Config().NodeID)
	c.mu.Unlock()
	if now := c.leading(15 * time.Second); now == old {
		t.Fatalf("%s, of protocol %d, leads a cluster of %d", old.Config().NodeID, wire.ProtocolHi, next)
	}
	rec.check(t)
}
