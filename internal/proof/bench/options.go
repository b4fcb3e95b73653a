package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// options are the command-line flags.
type options struct {
	natsURLs   []string
	monitorURL string
	replicas   int
	only       map[int]bool
	markdown   bool
	keepStart  bool // Node.Start gets a ctx that is never cancelled
	verbose    bool

	nHandover   int             // figures 1 and 8
	nCrash      int             // figures 2 and 8, per kind of crash
	crashTTL    time.Duration   // figures 2 and 8
	steady      time.Duration   // figure 3
	herd        []int           // figure 4: group sizes
	nHerd       int             // figure 4: elections per size
	scale       []int           // figure 5: numbers of clusters
	scaleSteady time.Duration   // figure 5
	scaleTTL    time.Duration   // figure 5
	scaleRenew  time.Duration   // figure 5 (0: the library's for the TTL)
	scaleStarts int             // figure 5: Node.Start calls at a time
	scaleConns  int             // figure 5: connections the nodes share (0: one each)
	scalePoints string          // figure 5: a file each count's figures are appended to, as JSON lines (for scaleplot)
	scaleGiveUp time.Duration   // figure 5: how long to keep starting nodes at one count
	nofile      uint64          // figures 5 and 10: the server process's descriptor limit (0: inherited)
	limits      []int           // figure 10: numbers of streams to measure at
	memStorage  bool            // figure 10: memory storage, not file
	scaleMemory bool            // figure 5: the buckets in memory storage, not file
	scaleInit   bool            // figure 5: the buckets made ahead of time, a LeaseTTL before the first Start
	nHealth     int             // figure 6
	nLeaderLoss int             // figure 8, per kind of loss
	vipTime     string          // figure 7: -benchtime
	nKeepalived int             // figure 9: runs per kind and way of stopping
	kaAdverts   []time.Duration // figure 9: keepalived's advert_int, one kind each
	kaTTLs      []time.Duration // figure 9: the agent's LeaseTTL, one kind each
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	nats := fs.String("nats", "", "comma-separated NATS URLs of an external deployment (default: embedded servers)")
	fs.StringVar(&o.monitorURL, "monitor", "", "HTTP monitoring URL of the external server, for figures 3 and 5 (e.g. http://host:8222)")
	fs.IntVar(&o.replicas, "replicas", 1, "bucket replicas on the external deployment (figures 1-6)")
	only := fs.String("only", "", "comma-separated figure numbers to run (default all)")
	fs.BoolVar(&o.markdown, "md", false, "print the table as Markdown")
	fs.BoolVar(&o.verbose, "v", false, "print the library's logs")
	startMode := fs.String("start-ctx", "cancel", `ctx given to Node.Start: "cancel" (a deadline, cancelled once Start returns, as examples/basic does) or "keep" (never cancelled)`)
	fs.IntVar(&o.nHandover, "n", 200, "handovers per kind (figures 1 and 8)")
	fs.IntVar(&o.nCrash, "n-crash", 30, "crashes per kind (figures 2 and 8)")
	fs.DurationVar(&o.crashTTL, "crash-ttl", time.Second, "LeaseTTL of the crash figures; RenewInterval is a quarter")
	fs.DurationVar(&o.steady, "steady", time.Minute, "steady-state window (figure 3)")
	herd := fs.String("herd", "3,100", "candidates per herd (figure 4)")
	fs.IntVar(&o.nHerd, "n-herd", 20, "elections per herd size (figure 4)")
	scale := fs.String("scale", "100,1000", "numbers of 3-node clusters (figure 5)")
	fs.DurationVar(&o.scaleSteady, "scale-steady", time.Minute, "steady window per scale (figure 5)")
	fs.DurationVar(&o.scaleTTL, "scale-ttl", 0, "LeaseTTL of figure 5 (default: the library's)")
	fs.DurationVar(&o.scaleRenew, "scale-renew", 0, "RenewInterval of figure 5 (default: the library's for its LeaseTTL), e.g. 10s with -scale-ttl 40s, as Kubernetes renews its node leases")
	fs.IntVar(&o.scaleStarts, "scale-starts", 32, "Node.Start calls at a time (figure 5)")
	fs.DurationVar(&o.scaleGiveUp, "scale-giveup", 4*time.Minute, "how long figure 5 keeps starting nodes at one count of clusters before it reports what gave")
	fs.StringVar(&o.scalePoints, "scale-points", "", "figure 5: append each count's figures to this file as a JSON line (go run ./internal/proof/scaleplot draws them)")
	scaleStorage := fs.String("scale-storage", "file", `storage of figure 5's buckets (Config.Bucket.Storage): "file" (the library's default) or "memory"`)
	fs.BoolVar(&o.scaleInit, "scale-init", false, "figure 5: make every cluster's bucket ahead of time, as go-cluster init does, and start the nodes once the newest is a LeaseTTL old (its first election then waits nothing)")
	fs.IntVar(&o.scaleConns, "scale-conns", 0, "connections the nodes of figure 5 share, as processes holding many Nodes would (0: every node its own)")
	fs.Uint64Var(&o.nofile, "server-nofile", 0, "descriptor limit (RLIMIT_NOFILE) of the server process of figures 5 and 10 (0: inherited; raising it needs root)")
	limits := fs.String("limits", "1000,3000,6000", "numbers of streams (buckets) at which figure 10 measures one server")
	storage := fs.String("limits-storage", "file", `storage of figure 10's streams: "file" (the library's default) or "memory"`)
	fs.IntVar(&o.nHealth, "n-health", 1000, "queries per kind (figure 6)")
	fs.IntVar(&o.nLeaderLoss, "n-loss", 5, "stream-leader losses per kind (figure 8)")
	fs.StringVar(&o.vipTime, "vip-benchtime", "20x", "go test -benchtime for the vip benchmark (figure 7)")
	fs.IntVar(&o.nKeepalived, "n-ka", 20, "runs per kind and way of stopping the holder (figure 9)")
	adverts := fs.String("ka-advert", "1s,100ms", "keepalived advert_int values, one kind each (figure 9; empty: none)")
	ttls := fs.String("ka-ttl", "1s,3s", "go-cluster agent LeaseTTL values, one kind each (figure 9; empty: none)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if *nats != "" {
		o.natsURLs = strings.Split(*nats, ",")
	}
	switch *startMode {
	case "cancel":
	case "keep":
		o.keepStart = true
	default:
		return o, fmt.Errorf("-start-ctx: %q is neither cancel nor keep", *startMode)
	}
	var err error
	if o.only, err = intSet(*only); err != nil {
		return o, fmt.Errorf("-only: %w", err)
	}
	if o.herd, err = ints(*herd); err != nil {
		return o, fmt.Errorf("-herd: %w", err)
	}
	if o.scale, err = ints(*scale); err != nil {
		return o, fmt.Errorf("-scale: %w", err)
	}
	if o.limits, err = ints(*limits); err != nil {
		return o, fmt.Errorf("-limits: %w", err)
	}
	switch *storage {
	case "file":
	case "memory":
		o.memStorage = true
	default:
		return o, fmt.Errorf("-limits-storage: %q is neither file nor memory", *storage)
	}
	switch *scaleStorage {
	case "file":
	case "memory":
		o.scaleMemory = true
	default:
		return o, fmt.Errorf("-scale-storage: %q is neither file nor memory", *scaleStorage)
	}
	if o.scaleConns < 0 {
		return o, fmt.Errorf("-scale-conns: %d is negative", o.scaleConns)
	}
	if o.kaAdverts, err = durations(*adverts); err != nil {
		return o, fmt.Errorf("-ka-advert: %w", err)
	}
	if o.kaTTLs, err = durations(*ttls); err != nil {
		return o, fmt.Errorf("-ka-ttl: %w", err)
	}
	return o, nil
}

// want reports whether figure n is to run.
func (o options) want(n int) bool { return len(o.only) == 0 || o.only[n] }

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func intSet(s string) (map[int]bool, error) {
	vs, err := ints(s)
	if err != nil {
		return nil, err
	}
	m := map[int]bool{}
	for _, v := range vs {
		m[v] = true
	}
	return m, nil
}

// durations parses a comma-separated list of positive durations.
func durations(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%q is not a positive duration", f)
		}
		out = append(out, d)
	}
	return out, nil
}
