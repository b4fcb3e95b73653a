// Command metrics runs a small go-cluster cluster with health checks and
// Prometheus metrics, and stays up for the operator CLI:
//
//	go run ./examples/metrics -embedded
//
// It runs three nodes of cluster "demo" in this process, on the server of
// -nats, default $NATS_URL. With neither it refuses to start (exit status
// 2): nodes run in several processes, each on a server of its own, would
// each elect a leader. -embedded starts a NATS server in this process and
// says so, with its URL, in its first line of output. Each node has a
// health.Checker (kept in step by a health.Adapter) and a
// metrics.Collector; the collectors share one registry, served at
// /metrics. It prints the NATS URL and the metrics URL, then runs until
// interrupted (or for -duration):
//
//	go-cluster -s nats://127.0.0.1:PORT --cluster demo status
//	go-cluster -s nats://127.0.0.1:PORT --cluster demo stepdown --to node-3
//	curl -s http://127.0.0.1:9464/metrics | grep gocluster_
//
// Against real servers, run one node per process:
//
//	go run ./examples/metrics -nats nats://a:4222 -cluster orders -node node-1 -nodes 1 -listen :9464
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ozanturksever/go-cluster/examples/embedded"
)

func main() {
	natsURLs := flag.String("nats", os.Getenv("NATS_URL"), "NATS server URLs, comma-separated (default $NATS_URL)")
	startEmbedded := flag.Bool("embedded", false, "start a NATS server in this process, for a try on one machine (instead of -nats)")
	clusterID := flag.String("cluster", "demo", "cluster ID")
	nodeID := flag.String("node", "node", "node ID, or prefix of the node IDs when -nodes > 1")
	nodes := flag.Int("nodes", 3, "number of nodes to run in this process")
	listen := flag.String("listen", "127.0.0.1:9464", "address of the /metrics endpoint")
	ttl := flag.Duration("ttl", 2*time.Second, "LeaseTTL of the nodes (RenewInterval is a quarter of it)")
	duration := flag.Duration("duration", 0, "how long to run; 0 until interrupted")
	verbose := flag.Bool("v", false, "log at debug level")
	flag.Parse()
	if err := embedded.CheckServer(*natsURLs, *startEmbedded); err != nil {
		fmt.Fprintln(os.Stderr, "metrics:", err)
		os.Exit(2)
	}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if *duration > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, *duration)
		defer stop()
	}
	cfg := settings{clusterID: *clusterID, ttl: *ttl, logger: logger}
	if err := run(ctx, cfg, *natsURLs, *nodeID, *nodes, *listen); err != nil {
		log.Fatal(err)
	}
}

// run runs the nodes on the server of urls; "" starts an embedded server.
func run(ctx context.Context, cfg settings, urls, nodeID string, nodes int, listen string) error {
	if urls == "" {
		srv, err := embedded.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		urls = srv.URL()
		fmt.Printf("-embedded: embedded NATS server at %s, in this process (other processes join with -nats %s)\n", urls, urls)
	}
	cfg.urls = strings.Split(urls, ",")

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var members []*member
	defer func() {
		for _, m := range members {
			m.stop(cfg.logger)
		}
	}()
	for i := 1; i <= nodes; i++ {
		id := nodeID
		if nodes > 1 {
			id = fmt.Sprintf("%s-%d", nodeID, i)
		}
		m, err := startMember(ctx, cfg, id)
		if err != nil {
			return err
		}
		members = append(members, m)
		reg.MustRegister(m.metrics)
	}

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	web := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- web.Serve(ln) }()

	fmt.Printf("cluster %q: %d nodes\nNATS:    %s\nmetrics: http://%s/metrics\n", cfg.clusterID, nodes, urls, ln.Addr())
	fmt.Printf("try:     go run ./cmd/go-cluster -s %s --cluster %s status\n", cfg.urls[0], cfg.clusterID)
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := web.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
