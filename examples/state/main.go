// Command state shows fenced state: a counter in the cluster's bucket that
// whichever node leads increments (read, add one, Put), while the leader
// is made to step down under it. Every Put is fenced on the lease by the
// NATS server, so a node that has lost the lease cannot write a stale
// value: at the end the counter equals the number of acknowledged
// increments. It starts an embedded NATS server unless -nats names one.
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

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/clustertest"
)

// counterKey is the state key of the counter.
const counterKey = "counter"

type options struct {
	nodes      int
	increments int64
	natsURL    string // "" starts an embedded server
}

// result is what a run counted.
type result struct {
	value     int64 // the counter's final value
	acked     int64 // Puts that returned success
	uncertain int64 // Puts that failed without a verdict (timeouts): they may have landed
	refused   int64 // Puts refused because the node no longer led
}

func main() {
	var o options
	flag.IntVar(&o.nodes, "nodes", 3, "nodes in the cluster")
	flag.Int64Var(&o.increments, "increments", 100, "increments to acknowledge before stopping")
	flag.StringVar(&o.natsURL, "nats", os.Getenv("NATS_URL"), "NATS server URL; empty starts an embedded server")
	flag.Parse()
	if _, err := run(os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, "state example:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, o options) (result, error) {
	var res result
	if o.natsURL == "" {
		srv, err := clustertest.StartServer()
		if err != nil {
			return res, err
		}
		defer srv.Close()
		o.natsURL = srv.URL()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	clusterID := "counter-" + strconv.FormatInt(time.Now().UnixNano(), 36)

	var c counter
	c.target = o.increments
	var nodes []*cluster.Node
	defer func() {
		for _, n := range nodes {
			sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = n.Stop(sctx)
			scancel()
		}
		c.workers.Wait()
	}()
	for i := range o.nodes {
		w := &worker{c: &c, out: out}
		n, err := cluster.NewNode(cluster.Config{
			ClusterID: clusterID,
			NodeID:    fmt.Sprintf("node-%d", i+1),
			NATSURLs:  strings.Split(o.natsURL, ","),
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

	// Step the leader down halfway, with its increments running.
	if err := c.waitAcked(ctx, o.increments/2); err != nil {
		return res, err
	}
	leader, err := nodes[0].WaitForLeader(ctx)
	if err != nil {
		return res, err
	}
	for _, n := range nodes {
		if n.NodeID() == leader {
			fmt.Fprintf(out, "%s steps down at %d acknowledged increments\n", n.NodeID(), c.acked.Load())
			if err := n.StepDown(ctx); err != nil && !errors.Is(err, cluster.ErrNotLeader) {
				return res, err
			}
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
	res.acked, res.uncertain, res.refused = c.acked.Load(), c.uncertain.Load(), c.refused.Load()
	fmt.Fprintf(out, "counter = %d (last written by epoch %d); acknowledged increments = %d; refused = %d; uncertain = %d\n",
		res.value, e.Epoch, res.acked, res.refused, res.uncertain)
	if res.value < res.acked || res.value > res.acked+res.uncertain {
		return res, fmt.Errorf("counter %d does not match %d acknowledged increments (%d uncertain)", res.value, res.acked, res.uncertain)
	}
	fmt.Fprintln(out, "ok: the counter equals the acknowledged increments")
	return res, nil
}

// counter is what the nodes share in this process: only the tally of
// outcomes. The counter itself lives in the cluster's state.
type counter struct {
	target    int64
	acked     atomic.Int64
	uncertain atomic.Int64
	refused   atomic.Int64
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
	fmt.Fprintf(w.out, "%s leads (epoch %d)\n", w.node.NodeID(), epoch)
	w.c.workers.Go(func() { w.increment(ctx) })
	return nil
}

func (w *worker) increment(tenure context.Context) {
	state := w.node.State()
	for tenure.Err() == nil && w.c.acked.Load() < w.c.target {
		// Requests get their own ctx: one cut short by the tenure's end
		// would leave its outcome unknown.
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := w.once(rctx, state)
		cancel()
		switch {
		case err == nil:
			w.c.acked.Add(1)
		case errors.Is(err, cluster.ErrNotLeader): // ErrFenced too
			w.c.refused.Add(1)
			return
		case errors.Is(err, errPut):
			w.c.uncertain.Add(1)
		}
	}
}

var errPut = errors.New("put failed")

// once reads the counter, adds one and writes it back.
func (w *worker) once(ctx context.Context, state *cluster.State) error {
	var v int64
	e, err := state.Get(ctx, counterKey)
	switch {
	case err == nil:
		v, _ = strconv.ParseInt(string(e.Value), 10, 64)
	case !errors.Is(err, cluster.ErrKeyNotFound):
		return err
	}
	if _, err := state.Put(ctx, counterKey, []byte(strconv.FormatInt(v+1, 10))); err != nil {
		if errors.Is(err, cluster.ErrNotLeader) {
			return err
		}
		return fmt.Errorf("%w: %w", errPut, err)
	}
	return nil
}
