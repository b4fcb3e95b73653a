// Command demo shows go-cluster electing, handing over and failing over,
// with nothing installed: it starts an embedded NATS server (or uses the
// one of -nats, default $NATS_URL), and says so first. Every node runs in
// this process, so a server of its own is safe: no node elsewhere can be
// on another one. It steps the leader down, crashes the next one, and
// prints what happened with timings. On an external server it deletes,
// at the end, the bucket it created (never one that was there before).
//
//	go run ./examples/demo
//	go run ./examples/demo -nodes 5 -ttl 2s -v
//	go run ./examples/demo -nats nats://127.0.0.1:4222
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/examples/embedded"
)

// options are the demo's flags.
type options struct {
	nodes     int
	ttl       time.Duration
	natsURL   string // "" starts an embedded server
	clusterID string // "" picks a fresh one
	verbose   bool
}

func main() {
	var o options
	flag.IntVar(&o.nodes, "nodes", 3, "number of nodes (at least 3: the demo crashes the second leader)")
	flag.DurationVar(&o.ttl, "ttl", 2*time.Second, "LeaseTTL")
	flag.StringVar(&o.natsURL, "nats", os.Getenv("NATS_URL"), "NATS server URLs, comma-separated (default $NATS_URL); with neither, an embedded server is started in this process")
	flag.StringVar(&o.clusterID, "cluster", "", "cluster ID (default demo-<time>, a fresh cluster)")
	flag.BoolVar(&o.verbose, "v", false, "print the library's logs")
	flag.Parse()
	if err := run(os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// demo tracks who leads, from the hooks.
type demo struct {
	outMu  sync.Mutex // hooks print from the nodes' goroutines
	out    io.Writer
	start  time.Time
	mu     sync.Mutex
	leader string
	became chan string // NodeIDs, as each OnBecomeLeader runs
}

func (d *demo) say(format string, args ...any) {
	d.printf("%8.1fms  %s\n", float64(time.Since(d.start).Microseconds())/1000, fmt.Sprintf(format, args...))
}

// printf writes to the output, one caller at a time.
func (d *demo) printf(format string, args ...any) {
	d.outMu.Lock()
	defer d.outMu.Unlock()
	fmt.Fprintf(d.out, format, args...)
}

func (d *demo) hooks(id string, node func() *cluster.Node) cluster.Hooks {
	return cluster.HookFuncs{
		BecomeLeader: func(ctx context.Context) error {
			d.mu.Lock()
			d.leader = id
			d.mu.Unlock()
			d.say("%s: OnBecomeLeader (epoch %d)", id, node().Epoch())
			d.became <- id
			return nil
		},
		LoseLeadership: func(ctx context.Context) error {
			d.say("%s: OnLoseLeadership", id)
			return nil
		},
	}
}

func run(out io.Writer, o options) (err error) {
	if o.nodes < 3 {
		return fmt.Errorf("-nodes %d: the demo needs at least 3", o.nodes)
	}
	d := &demo{out: out, start: time.Now(), became: make(chan string, 16)}
	natsURL := o.natsURL
	if natsURL == "" {
		srv, err := embedded.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		natsURL = srv.URL()
		d.say("embedded NATS server with JetStream at %s", natsURL)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if o.verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	clusterID := o.clusterID
	if clusterID == "" {
		clusterID = fmt.Sprintf("demo-%d", time.Now().UnixNano())
	}
	ctx := context.Background()

	// On a server of the user's, the demo cleans up after itself.
	if o.natsURL != "" {
		cleanup, cerr := bucketCleanup(ctx, d, natsURL, clusterID)
		if cerr != nil {
			return cerr
		}
		defer func() { err = errors.Join(err, cleanup()) }()
	}

	byID := map[string]*cluster.Node{}
	conns := map[string]*nats.Conn{}
	// Every node is stopped before the bucket is deleted (deferred above,
	// so it runs after this).
	defer func() {
		for i := 1; i <= o.nodes; i++ {
			id := fmt.Sprintf("node-%d", i)
			if n := byID[id]; n != nil {
				_ = n.Stop(ctx)
			}
			if nc := conns[id]; nc != nil {
				nc.Close()
			}
		}
	}()
	for i := 1; i <= o.nodes; i++ {
		id := fmt.Sprintf("node-%d", i)
		// Each node gets its own connection so the demo can "crash" one by
		// closing it: the node stops without releasing the lease.
		nc, err := nats.Connect(natsURL, nats.Name(id))
		if err != nil {
			return err
		}
		conns[id] = nc
		var n *cluster.Node
		n, err = cluster.NewNode(cluster.Config{
			ClusterID: clusterID, NodeID: id, Conn: nc,
			LeaseTTL: o.ttl, Logger: logger,
		}, d.hooks(id, func() *cluster.Node { return n }))
		if err != nil {
			return err
		}
		if err := n.Start(ctx); err != nil {
			return err
		}
		byID[id] = n
	}
	ttl := o.ttl
	d.say("started %d nodes of cluster %s, LeaseTTL %v, RenewInterval %v", o.nodes, clusterID, ttl, byID["node-1"].Config().RenewInterval)
	d.say("a new bucket: the first election waits one LeaseTTL (go-cluster init creates it ahead of time)")
	first := <-d.became
	d.say("%s leads", first)

	d.printf("\n")
	d.say("--- graceful handover: %s.StepDown()", first)
	t0 := time.Now()
	if err := byID[first].StepDown(ctx); err != nil {
		return err
	}
	second := <-d.became
	handover := time.Since(t0)
	d.say("%s leads; StepDown to successor's OnBecomeLeader: %v", second, handover.Round(10*time.Microsecond))

	d.printf("\n")
	d.say("--- crash: %s's connection is closed, no release", second)
	t1 := time.Now()
	conns[second].Close()
	third := <-d.became
	failover := time.Since(t1)
	d.say("%s leads; crash to successor's OnBecomeLeader: %v (%.2f x LeaseTTL)", third, failover.Round(time.Millisecond), float64(failover)/float64(ttl))

	d.printf("\n")
	d.printf("summary: graceful handover %v, crash failover %v with LeaseTTL %v, final leader %s (epoch %d)\n",
		handover.Round(10*time.Microsecond), failover.Round(time.Millisecond), ttl, third, byID[third].Epoch())
	d.printf("\n")
	d.say("--- stopping every node (each leader releases to the next)")
	return nil
}

// bucketCleanup returns the function that deletes the cluster's bucket
// at the end of the demo if it does not exist now: the demo's nodes create
// it, and a bucket that was there before is someone else's.
func bucketCleanup(ctx context.Context, d *demo, natsURL, clusterID string) (func() error, error) {
	bucket := "cluster-" + clusterID // the election's bucket (docs/design.md §1.1)
	admin, err := nats.Connect(natsURL, nats.Name("go-cluster demo"))
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(admin)
	if err != nil {
		admin.Close()
		return nil, err
	}
	_, err = js.KeyValue(ctx, bucket)
	switch {
	case err == nil: // there before: kept
		admin.Close()
		return func() error { return nil }, nil
	case !errors.Is(err, jetstream.ErrBucketNotFound):
		admin.Close()
		return nil, fmt.Errorf("look up the bucket %s: %w", bucket, err)
	}
	return func() error {
		defer admin.Close()
		if err := js.DeleteKeyValue(ctx, bucket); err != nil {
			return fmt.Errorf("delete the bucket %s the demo created: %w", bucket, err)
		}
		d.say("deleted the bucket %s, which the demo created", bucket)
		return nil
	}, nil
}
