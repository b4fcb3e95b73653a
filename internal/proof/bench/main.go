// Command bench measures go-cluster and prints a table of the figures of
// BENCHMARKS.md, each with its parameters, n, median and p99.
//
//	go run ./internal/proof/bench                      # every figure, embedded servers
//	go run ./internal/proof/bench -only 1,2 -n 500     # some figures, more samples
//	go run ./internal/proof/bench -nats nats://a:4222,nats://b:4222 -monitor http://a:8222
//
// By default it starts its own NATS servers: one inside the process for the
// latency figures, one in a child process for the scale figure (so that the
// server's CPU and memory are not counted as the nodes'), and three child
// processes forming a JetStream cluster for figure 8 (so that a server can be
// killed for real). Every node has its own connection, as if it ran in a
// process of its own, and the server's statistics tell them apart by name.
//
// Figures: 1 graceful handover, 2 crash failover, 3 steady-state cost,
// 4 herd, 5 scale, 6 health, 7 VIP (the vip package's own benchmark, run
// with go test; root only), 8 the 3-node JetStream cluster, 9 go-cluster
// agent side by side with keepalived (root, keepalived installed), 10 what
// limits one server (streams, consumers, descriptors, the JetStream API).
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == serveCommand {
		if err := serve(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench serve:", err)
			os.Exit(1)
		}
		return
	}
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// bench holds what the figures share.
type bench struct {
	o      options
	log    *slog.Logger // progress, on stderr
	libLog *slog.Logger // the library's logs: discarded unless -v
	runID  string
	seq    int
	single *backend // the single server of figures 1-4 and 6, made on first use
}

// clusterID returns a ClusterID no other figure of this run uses.
func (bn *bench) clusterID(what string) string {
	bn.seq++
	return fmt.Sprintf("%s-%s-%d", what, bn.runID, bn.seq)
}

// server returns the single server, starting it if needed.
func (bn *bench) server() (*backend, error) {
	if bn.single != nil {
		return bn.single, nil
	}
	if len(bn.o.natsURLs) > 0 {
		bn.single = externalBackend(bn.o.natsURLs, bn.o.monitorURL, bn.o.replicas)
		return bn.single, nil
	}
	b, err := embeddedBackend()
	if err != nil {
		return nil, err
	}
	bn.single = b
	return b, nil
}

func run(ctx context.Context, o options, out io.Writer) error {
	bn := &bench{
		o:      o,
		log:    slog.New(slog.NewTextHandler(os.Stderr, nil)),
		libLog: slog.New(slog.NewTextHandler(io.Discard, nil)),
		runID:  time.Now().Format("150405"),
	}
	if o.verbose {
		bn.libLog = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	defer func() {
		if bn.single != nil {
			bn.single.shutdown()
		}
	}()

	start := time.Now()
	fmt.Fprintf(out, "go-cluster benchmarks: %s, GOMAXPROCS %d, %s/%s, load %s\n",
		runtime.Version(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, loadAverage())
	var rows []row
	for _, f := range bn.figures() {
		if !o.want(f.num) {
			continue
		}
		bn.log.Info("figure", "n", f.num, "name", f.name)
		got := f.run(ctx)
		for _, r := range got {
			bn.log.Info("result", "fig", r.fig, "measure", r.name, "n", r.n, "median", r.median, "p99", r.p99, "met", r.met, "note", r.note)
		}
		rows = append(rows, got...)
	}
	fmt.Fprintf(out, "finished in %v, load %s\n\n", time.Since(start).Round(time.Second), loadAverage())
	if o.markdown {
		printMarkdown(out, rows)
	} else {
		printText(out, rows)
	}
	return nil
}

// figure is one numbered figure of the issue.
type figure struct {
	num  int
	name string
	run  func(ctx context.Context) []row
}

func (bn *bench) figures() []figure {
	onServer := func(fig string, f func(context.Context, *backend, string) []row) func(context.Context) []row {
		return func(ctx context.Context) []row {
			b, err := bn.server()
			if err != nil {
				return []row{failed(fig, "start server", err)}
			}
			return f(ctx, b, fig)
		}
	}
	return []figure{
		{1, "graceful handover", onServer("1", bn.figHandover)},
		{2, "crash failover", onServer("2", bn.figCrash)},
		{3, "steady-state cost", onServer("3", bn.figSteady)},
		{4, "herd", onServer("4", bn.figHerd)},
		{5, "scale", bn.figScale},
		{6, "health", onServer("6", bn.figHealth)},
		{7, "VIP", bn.figVIP},
		{8, "3-node JetStream cluster", bn.figJSCluster},
		{9, "side by side with keepalived", bn.figKeepalived},
		{10, "what limits one server", bn.figLimits},
	}
}

// loadAverage is the 1, 5 and 15 minute load of the machine.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
