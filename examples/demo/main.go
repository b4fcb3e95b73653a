// Command demo shows go-cluster electing, handing over and failing over,
// with nothing installed: it starts an embedded NATS server (or uses -nats),
// runs several nodes in this process, steps the leader down, crashes the
// next one, and prints what happened with timings.
//
//	go run ./examples/demo
//	go run ./examples/demo -nodes 5 -ttl 2s -v
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/clustertest"
)

func main() {
	nodes := flag.Int("nodes", 3, "number of nodes")
	ttl := flag.Duration("ttl", 2*time.Second, "LeaseTTL")
	natsURL := flag.String("nats", "", "NATS server URL (default: start an embedded server)")
	verbose := flag.Bool("v", false, "print the library's logs")
	flag.Parse()
	if err := run(*nodes, *ttl, *natsURL, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// demo tracks who leads, from the hooks.
type demo struct {
	start  time.Time
	mu     sync.Mutex
	leader string
	became chan string // NodeIDs, as each OnBecomeLeader runs
}

func (d *demo) say(format string, args ...any) {
	fmt.Printf("%8.1fms  %s\n", float64(time.Since(d.start).Microseconds())/1000, fmt.Sprintf(format, args...))
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

func run(count int, ttl time.Duration, natsURL string, verbose bool) error {
	d := &demo{start: time.Now(), became: make(chan string, 16)}
	if natsURL == "" {
		srv, err := clustertest.StartServer()
		if err != nil {
			return err
		}
		defer srv.Close()
		natsURL = srv.URL()
		d.say("embedded NATS server with JetStream at %s", natsURL)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	clusterID := fmt.Sprintf("demo-%d", time.Now().UnixNano())
	ctx := context.Background()

	byID := map[string]*cluster.Node{}
	conns := map[string]*nats.Conn{}
	for i := 1; i <= count; i++ {
		id := fmt.Sprintf("node-%d", i)
		// Each node gets its own connection so the demo can "crash" one by
		// closing it: the node stops without releasing the lease.
		nc, err := nats.Connect(natsURL)
		if err != nil {
			return err
		}
		conns[id] = nc
		var n *cluster.Node
		n, err = cluster.NewNode(cluster.Config{
			ClusterID: clusterID, NodeID: id, Conn: nc,
			LeaseTTL: ttl, Logger: logger,
		}, d.hooks(id, func() *cluster.Node { return n }))
		if err != nil {
			return err
		}
		if err := n.Start(ctx); err != nil {
			return err
		}
		byID[id] = n
		defer func() {
			_ = n.Stop(ctx)
			nc.Close()
		}()
	}
	d.say("started %d nodes, LeaseTTL %v, RenewInterval %v", count, ttl, byID["node-1"].Config().RenewInterval)

	first := <-d.became
	d.say("%s leads", first)

	fmt.Println()
	d.say("--- graceful handover: %s.StepDown()", first)
	t0 := time.Now()
	if err := byID[first].StepDown(ctx); err != nil {
		return err
	}
	second := <-d.became
	handover := time.Since(t0)
	d.say("%s leads; StepDown to successor's OnBecomeLeader: %v", second, handover.Round(10*time.Microsecond))

	fmt.Println()
	d.say("--- crash: %s's connection is closed, no release", second)
	t1 := time.Now()
	conns[second].Close()
	third := <-d.became
	failover := time.Since(t1)
	d.say("%s leads; crash to successor's OnBecomeLeader: %v (%.2f x LeaseTTL)", third, failover.Round(time.Millisecond), float64(failover)/float64(ttl))

	fmt.Println()
	fmt.Printf("summary: graceful handover %v, crash failover %v with LeaseTTL %v, final leader %s (epoch %d)\n",
		handover.Round(10*time.Microsecond), failover.Round(time.Millisecond), ttl, third, byID[third].Epoch())
	fmt.Println()
	d.say("--- stopping every node (each leader releases to the next)")
	return nil
}
