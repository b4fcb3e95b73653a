package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
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
	printSeries(web.URL, "gocluster_is_leader", "gocluster_nats_connected")
	// gocluster_epoch is the tenure's epoch, exactly: a new bucket's first
	// is its creation time in µs, below 2^53 until the year 2255.
	fmt.Println("gocluster_epoch is the node's:", seriesValue(web.URL, "gocluster_epoch") == float64(node.Epoch()))
	if err := node.Stop(ctx); err != nil {
		fmt.Println(err)
		return
	}
	printSeries(web.URL, "gocluster_is_leader", "gocluster_leadership_transitions_total")
	// Output:
	// gocluster_is_leader{cluster="orders",node="node-1"} 1
	// gocluster_nats_connected{cluster="orders",node="node-1"} 1
	// gocluster_epoch is the node's: true
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

// seriesValue scrapes url and returns the value of the first series of
// name, NaN if none.
func seriesValue(url, name string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		return math.NaN()
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, name+"{") {
			if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
				return v
			}
		}
	}
	return math.NaN()
}
