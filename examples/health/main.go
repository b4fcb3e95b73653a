// Command health shows the health add-on of go-cluster.
//
// It runs three nodes of cluster "demo" in this process (each a
// cluster.Node with a health.Checker kept in step by a health.Adapter),
// prints what a cluster-wide health query sees every second, and makes the
// leader step down half-way through. The server is that of -nats, default
// $NATS_URL. With neither it refuses to start (exit status 2): nodes run in
// several processes, each on a server of its own, would each elect a
// leader. -embedded starts a NATS server in this process and says so, with
// its URL, in its first line of output:
//
//	go run ./examples/health -embedded
//
// Against real servers, run nodes in several processes and query them:
//
//	go run ./examples/health -nats nats://a:4222,nats://b:4222 -cluster orders -node node-1 -nodes 1 -duration 1h
//	go run ./examples/health -nats nats://a:4222 -cluster orders -query
//
// The same JSON is available to any NATS client:
//
//	nats req cluster.demo.health.node-1 ''
//	nats req cluster.demo.health '' --replies 0 --timeout 1s
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/examples/embedded"
	"github.com/ozanturksever/go-cluster/health"
)

func main() {
	natsURLs := flag.String("nats", os.Getenv("NATS_URL"), "NATS server URLs, comma-separated (default $NATS_URL)")
	startEmbedded := flag.Bool("embedded", false, "start a NATS server in this process, for a try on one machine (instead of -nats)")
	clusterID := flag.String("cluster", "demo", "cluster ID")
	nodeID := flag.String("node", "node", "node ID, or prefix of the node IDs when -nodes > 1")
	nodes := flag.Int("nodes", 3, "number of nodes to run in this process")
	duration := flag.Duration("duration", 8*time.Second, "how long to run")
	query := flag.Bool("query", false, "only query the cluster once and print the JSON responses")
	verbose := flag.Bool("v", false, "log at debug level")
	flag.Parse()
	if err := embedded.CheckServer(*natsURLs, *startEmbedded); err != nil {
		fmt.Fprintln(os.Stderr, "health:", err)
		os.Exit(2)
	}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if err := run(ctx, logger, *natsURLs, *clusterID, *nodeID, *nodes, *duration, *query); err != nil {
		log.Fatal(err)
	}
}

// run runs the nodes, or the query, on the server of urls; "" starts an
// embedded server.
func run(ctx context.Context, logger *slog.Logger, urls, clusterID, nodeID string, nodes int, duration time.Duration, query bool) error {
	if urls == "" {
		srv, err := embedded.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		urls = srv.URL()
		fmt.Printf("-embedded: embedded NATS server at %s, in this process (other processes join with -nats %s)\n", urls, urls)
	}
	nc, err := nats.Connect(urls, nats.Name("health example client"), nats.MaxReconnects(-1))
	if err != nil {
		return err
	}
	defer nc.Close()
	client, err := health.NewClient(nc, clusterID)
	if err != nil {
		return err
	}

	if query {
		rs, err := client.QueryCluster(ctx, time.Second)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(os.Stdout)
		for _, r := range rs {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}

	var members []*member
	defer func() {
		for _, m := range members {
			m.stop(logger)
		}
	}()
	for i := 1; i <= nodes; i++ {
		id := nodeID
		if nodes > 1 {
			id = fmt.Sprintf("%s-%d", nodeID, i)
		}
		m, err := startMember(ctx, logger, strings.Split(urls, ","), clusterID, id)
		if err != nil {
			return err
		}
		members = append(members, m)
	}

	ctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	steppedDown := false
	start := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		rs, err := client.QueryCluster(ctx, 200*time.Millisecond)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			fmt.Println("query:", err)
			continue
		}
		printTable(time.Since(start), rs)
		if !steppedDown && time.Since(start) > duration/2 {
			for _, m := range members {
				if m.node.IsLeader() {
					fmt.Printf("--- %s steps down\n", m.node.Config().NodeID)
					if err := m.node.StepDown(ctx); err != nil {
						fmt.Println("step down:", err)
					}
					steppedDown = true
					break
				}
			}
		}
	}
}

// member is one node of the cluster with its health checker.
type member struct {
	node    *cluster.Node
	checker *health.Checker
	nc      *nats.Conn
}

func startMember(ctx context.Context, logger *slog.Logger, urls []string, clusterID, nodeID string) (*member, error) {
	nc, err := nats.Connect(strings.Join(urls, ","), nats.Name(nodeID), nats.MaxReconnects(-1))
	if err != nil {
		return nil, err
	}
	checker, err := health.NewChecker(health.Config{ClusterID: clusterID, NodeID: nodeID, Conn: nc, Logger: logger})
	if err != nil {
		nc.Close()
		return nil, err
	}
	adapter := health.NewAdapter(checker)
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: clusterID, NodeID: nodeID, Conn: nc, Logger: logger,
		LeaseTTL: 2 * time.Second, RenewInterval: 500 * time.Millisecond,
	}, cluster.ComposeHooks(appHooks(nodeID), adapter))
	if err != nil {
		nc.Close()
		return nil, err
	}
	if err := adapter.Bind(node); err != nil {
		nc.Close()
		return nil, err
	}
	checker.SetCustom("pid", os.Getpid())
	if err := checker.Start(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	if err := node.Start(ctx); err != nil {
		checker.Stop()
		nc.Close()
		return nil, err
	}
	return &member{node: node, checker: checker, nc: nc}, nil
}

func (m *member) stop(logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.node.Stop(ctx); err != nil {
		logger.Warn("node stop", "node", m.node.Config().NodeID, "error", err)
	}
	m.checker.Stop()
	m.nc.Close()
}

// appHooks stands for the application's own hooks.
func appHooks(nodeID string) cluster.Hooks {
	return cluster.HookFuncs{
		BecomeLeader: func(context.Context) error {
			fmt.Printf("--- %s: I lead now\n", nodeID)
			return nil
		},
	}
}

func printTable(elapsed time.Duration, rs []health.Response) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "t=%s\tNODE\tROLE\tLEADER\tEPOCH\tUPTIME\n", elapsed.Round(time.Second))
	for _, r := range rs {
		fmt.Fprintf(w, "\t%s\t%s\t%s\t%d\t%s\n", r.NodeID, r.Role, r.Leader, r.Epoch,
			(time.Duration(r.UptimeMs) * time.Millisecond).Round(time.Second))
	}
	w.Flush()
}
