// Command state shows fenced state: a counter in the cluster's bucket that
// whichever node leads increments (read, add one, Put), while the leader
// is broken under it. Every Put is fenced on the lease by the NATS server,
// so a node that has lost the lease cannot write a stale value: at the end
// the counter equals the number of acknowledged increments (plus at most
// the increments whose Put failed without a verdict, which may have
// landed). Every node runs in this process, so it starts an embedded NATS
// server of its own (and says so first) unless -nats or NATS_URL names
// one.
//
// The leader steps down at a quarter of the increments, is paused at half
// and killed at three quarters, each time with its increments running.
// All nodes run in this process, so the faults are what can be done to a
// node here, honestly:
//
//   - step down: Node.StepDown, a graceful handover;
//   - pause: the node's connection is stalled (its bytes held both ways,
//     then delivered in order) until another node leads, past its
//     LeaseTTL. A write it had in flight then reaches the server after
//     the successor took over, and is refused ("by the server" in the
//     summary). The node's own clock keeps running, so it sees its tenure
//     end, unlike a process stopped with SIGSTOP. It needs a link that can
//     be stalled: the example's test puts a fault proxy
//     (internal/faultproxy) on each node's connection; go run skips it;
//   - kill: the node's connection is closed, with no Stop and no release,
//     so the successor waits out the lease. The node itself stops
//     (OnLoseLeadership runs), unlike a process killed with kill -9.
//
// The real-process faults run in internal/proctest: node processes writing
// fenced state whose leader is frozen with SIGSTOP past its LeaseTTL (with
// and without a write held in the network) and woken up, or killed with
// kill -9; there a plain JetStream client checks the bucket's stream order.
//
//	go run ./examples/state
//	go run ./examples/state -nodes 5 -increments 200
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/examples/embedded"
	"github.com/ozanturksever/go-cluster/state"
)

// counterKey is the state key of the counter.
const counterKey = "counter"

type options struct {
	nodes      int
	increments int64
	natsURL    string // "" starts an embedded server
	// links are the nodes' ways to natsURL, one per node; with them the
	// leader is also paused. None: the nodes connect to natsURL directly.
	links []link
}

// link is a node's way to the NATS server that can be stalled; a fault
// proxy (internal/faultproxy) in the example's test.
type link interface {
	URL() string // where the node connects
	Stall()      // hold the node's bytes, both ways
	Restore()    // deliver them in order, and forward again
}

// result is what a run counted.
type result struct {
	value     int64 // the counter's final value
	acked     int64 // Puts that returned success
	uncertain int64 // Puts that failed without a verdict (timeouts): they may have landed
	refused   int64 // Puts refused because the node no longer led
	fenced    int64 // of those, refused by the server: sent before the lease moved, arrived after
}

func main() {
	var o options
	flag.IntVar(&o.nodes, "nodes", 3, "nodes in the cluster")
	flag.Int64Var(&o.increments, "increments", 100, "increments to acknowledge before stopping (at least 4)")
	flag.StringVar(&o.natsURL, "nats", os.Getenv("NATS_URL"), "NATS server URL (default $NATS_URL); with neither, an embedded server is started in this process")
	flag.Parse()
	if _, err := run(os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, "state example:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, o options) (result, error) {
	var res result
	out = &syncWriter{w: out} // the nodes' hooks print too
	if o.increments < 4 || o.nodes < 3 {
		return res, errors.New("need at least 3 nodes (one is killed) and 4 increments")
	}
	if len(o.links) > 0 && len(o.links) != o.nodes {
		return res, fmt.Errorf("%d links for %d nodes", len(o.links), o.nodes)
	}
	if o.natsURL == "" {
		srv, err := embedded.Start()
		if err != nil {
			return res, err
		}
		defer srv.Close()
		o.natsURL = srv.URL()
		fmt.Fprintf(out, "embedded NATS server at %s, in this process: every node runs here\n", o.natsURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	clusterID := "counter-" + strconv.FormatInt(time.Now().UnixNano(), 36)

	var c counter
	c.target = o.increments
	var nodes []*cluster.Node
	var conns []*nats.Conn
	defer func() {
		for _, n := range nodes {
			sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = n.Stop(sctx)
			scancel()
		}
		c.workers.Wait()
		for _, nc := range conns {
			nc.Close()
		}
	}()
	for i := range o.nodes {
		id := fmt.Sprintf("node-%d", i+1)
		url := o.natsURL
		if len(o.links) > 0 {
			url = o.links[i].URL()
		}
		// Each node gets its own connection, so that one can be killed by
		// closing it.
		nc, err := nats.Connect(url, nats.Name(id), nats.MaxReconnects(-1))
		if err != nil {
			return res, err
		}
		conns = append(conns, nc)
		w := &worker{c: &c, out: out}
		n, err := cluster.NewNode(cluster.Config{
			ClusterID: clusterID,
			NodeID:    id,
			Conn:      nc,
			LeaseTTL:  time.Second,
			Cooldown:  2 * time.Second,
			Logger:    logger,
		}, w)
		if err != nil {
			return res, err
		}
		w.node = n
		if err := n.Start(ctx); err != nil {
			return res, err
		}
		nodes = append(nodes, n)
	}

	// The faults, each on the leader of the moment, with its increments
	// running.
	f := &faults{out: out, nodes: nodes, conns: conns, links: o.links, killed: map[int]bool{}}
	for _, step := range []struct {
		at    int64
		fault func(ctx context.Context, i int, acked int64) error
	}{
		{o.increments / 4, f.stepDown},
		{o.increments / 2, f.pause},
		{3 * o.increments / 4, f.kill},
	} {
		if err := c.waitAcked(ctx, step.at); err != nil {
			return res, err
		}
		i, err := f.leader(ctx)
		if err != nil {
			return res, err
		}
		if err := step.fault(ctx, i, c.acked.Load()); err != nil {
			return res, err
		}
	}
	if err := c.waitAcked(ctx, o.increments); err != nil {
		return res, err
	}
	for _, n := range nodes {
		if err := n.Stop(ctx); err != nil {
			return res, err
		}
	}
	c.workers.Wait()

	// Read the result through a fresh observer.
	obs, err := cluster.NewObserver(cluster.Config{ClusterID: clusterID, NodeID: "reader",
		NATSURLs: strings.Split(o.natsURL, ","), Logger: logger}, nil)
	if err != nil {
		return res, err
	}
	if err := obs.Start(ctx); err != nil {
		return res, err
	}
	defer func() { _ = obs.Stop(context.Background()) }()
	e, err := obs.State().Get(ctx, counterKey)
	if err != nil {
		return res, err
	}
	res.value, _ = strconv.ParseInt(string(e.Value), 10, 64)
	res.acked, res.uncertain, res.refused, res.fenced = c.acked.Load(), c.uncertain.Load(), c.refused.Load(), c.fenced.Load()
	fmt.Fprintf(out, "counter = %d (last written by epoch %d); acknowledged increments = %d; refused = %d (%d by the server); uncertain = %d\n",
		res.value, e.Epoch, res.acked, res.refused, res.fenced, res.uncertain)
	if res.value < res.acked || res.value > res.acked+res.uncertain {
		return res, fmt.Errorf("counter %d does not match %d acknowledged increments (%d uncertain)", res.value, res.acked, res.uncertain)
	}
	if res.value == res.acked {
		fmt.Fprintln(out, "ok: the counter equals the acknowledged increments")
	} else {
		fmt.Fprintf(out, "ok: the counter equals the acknowledged increments plus %d whose Put failed without a verdict but landed\n", res.value-res.acked)
	}
	return res, nil
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// counter is what the nodes share in this process: only the tally of
// outcomes. The counter itself lives in the cluster's state.
type counter struct {
	target    int64
	acked     atomic.Int64
	uncertain atomic.Int64
	refused   atomic.Int64
	fenced    atomic.Int64
	workers   sync.WaitGroup
}

func (c *counter) waitAcked(ctx context.Context, n int64) error {
	for c.acked.Load() < n {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d increments (have %d): %w", n, c.acked.Load(), ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// worker is one node's application: it increments while it leads.
type worker struct {
	cluster.NoOpHooks
	c    *counter
	node *cluster.Node
	out  io.Writer
}

// OnBecomeLeader increments the counter until the tenure ends (ctx) or
// enough increments are acknowledged.
func (w *worker) OnBecomeLeader(ctx context.Context) error {
	epoch, _ := cluster.TenureEpoch(ctx)
	fmt.Fprintf(w.out, "%s leads (epoch %d)\n", w.node.Config().NodeID, epoch)
	w.c.workers.Go(func() { w.increment(ctx) })
	return nil
}

func (w *worker) increment(tenure context.Context) {
	st := w.node.State()
	for tenure.Err() == nil && w.c.acked.Load() < w.c.target {
		// Requests get their own ctx: one cut short by the tenure's end
		// would leave its outcome unknown.
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := w.once(rctx, st)
		cancel()
		switch {
		case err == nil:
			w.c.acked.Add(1)
		case errors.Is(err, cluster.ErrNotLeader): // ErrFenced too
			w.c.refused.Add(1)
			if errors.Is(err, state.ErrFenced) {
				w.c.fenced.Add(1)
			}
			return
		case errors.Is(err, errPut):
			w.c.uncertain.Add(1)
		}
	}
}

var errPut = errors.New("put failed")

// once reads the counter, adds one and writes it back.
func (w *worker) once(ctx context.Context, st *state.State) error {
	var v int64
	e, err := st.Get(ctx, counterKey)
	switch {
	case err == nil:
		v, _ = strconv.ParseInt(string(e.Value), 10, 64)
	case !errors.Is(err, state.ErrKeyNotFound):
		return err
	}
	if _, err := st.Put(ctx, counterKey, []byte(strconv.FormatInt(v+1, 10))); err != nil {
		if errors.Is(err, cluster.ErrNotLeader) && !errors.Is(err, state.ErrWriteUncertain) {
			return err // refused: nothing landed
		}
		return fmt.Errorf("%w: %w", errPut, err) // it may have landed
	}
	return nil
}
