package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/clustertest"
	"github.com/ozanturksever/go-cluster/metrics"
)

// A node reports to a Collector, which is registered on a registry served
// over HTTP; a scrape shows the node leading, and, after Stop, not.
func Example() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	m, err := metrics.New("orders", "node-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: "orders", NodeID: "node-1", NATSURLs: []string{srv.URL()},
		LeaseTTL: time.Second, Metrics: m, Logger: slog.New(slog.DiscardHandler),
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Bind(node); err != nil { // is_leader, epoch and the connection, read at scrape time
		fmt.Println(err)
		return
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	web := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer web.Close()

	ctx := context.Background()
	if err := node.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := node.WaitForLeader(ctx); err != nil {
		fmt.Println(err)
		return
	}
	printSeries(web.URL, "gocluster_is_leader", "gocluster_epoch", "gocluster_nats_connected")
	if err := node.Stop(ctx); err != nil {
		fmt.Println(err)
		return
	}
	printSeries(web.URL, "gocluster_is_leader", "gocluster_leadership_transitions_total")
	// Output:
	// gocluster_epoch{cluster="orders",node="node-1"} 1
	// gocluster_is_leader{cluster="orders",node="node-1"} 1
	// gocluster_nats_connected{cluster="orders",node="node-1"} 1
	// gocluster_is_leader{cluster="orders",node="node-1"} 0
	// gocluster_leadership_transitions_total{cluster="orders",node="node-1",transition="acquired"} 1
	// gocluster_leadership_transitions_total{cluster="orders",node="node-1",transition="lost"} 1
}

// printSeries scrapes url and prints the samples of the named metrics.
func printSeries(url string, names ...string) {
	resp, err := http.Get(url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		for _, n := range names {
			if strings.HasPrefix(line, n+"{") {
				fmt.Println(line)
			}
		}
	}
}
