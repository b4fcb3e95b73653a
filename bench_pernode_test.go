package cluster

// What a Node costs in a process that runs many (issue 43): N clusters of
// one Node each on one embedded server, every Node either on one shared
// connection (Config.Conn) or on a connection of its own, measured at rest.
// It runs only when -pernode.n is given:
//
//	go test -run '^$' -bench NodesPerProcess -benchtime 1x -timeout 30m -pernode.n 1,100,1000 -pernode.profiles /tmp/pernode .
//
// The server runs in this process, so the runtime's totals hold its share
// too (a client, a consumer): the heap is split by the allocation's stack
// (any nats-server frame: the server's) with runtime.MemProfileRate 1 for
// the run, and goroutines by the function each one started in.

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

var (
	perNodeCounts   = flag.String("pernode.n", "", "BenchmarkNodesPerProcess: comma-separated counts of Nodes (clusters of one) per run, e.g. 1,100,1000; the benchmark is skipped without it")
	perNodeProfiles = flag.String("pernode.profiles", "", "BenchmarkNodesPerProcess: write each run's goroutine (debug=1) and heap profiles at rest to this directory")
)

const (
	// perNodeStarts is how many Nodes start at a time.
	perNodeStarts = 16
	// perNodeWait bounds every wait: the buckets, the Starts, the leaders.
	perNodeWait = 3 * time.Minute
	// serverPrefix names the functions of the embedded server.
	serverPrefix = "github.com/nats-io/nats-server/"
	// libraryPrefix names this module's functions.
	libraryPrefix = "github.com/ozanturksever/go-cluster"
)

// BenchmarkNodesPerProcess reports, per Node at rest, the process's heap
// (HeapInuse) and goroutines, each split into the client's share (the
// library and nats.go) and the embedded server's, the goroutine stacks,
// and the server's subscriptions, consumers and connections. "shared"
// Nodes use one connection dialled before the first measurement; "own"
// Nodes each dial one, and conn-* is what those connections alone cost.
// It logs the goroutines per Node by the function they started in and
// the client's heap per Node by allocating function and by the innermost
// function of this module on the allocation's stack.
func BenchmarkNodesPerProcess(b *testing.B) {
	if *perNodeCounts == "" {
		b.Skip("pass -pernode.n 1,100,1000 (and -benchtime 1x): each run starts that many Nodes")
	}
	var counts []int
	for _, f := range strings.Split(*perNodeCounts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("-pernode.n: %q is not a count", f)
		}
		counts = append(counts, n)
	}
	// Every allocation sampled from here on: the split by stack is exact.
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = rate }()
	for _, mode := range []string{"shared", "own"} {
		for _, n := range counts {
			b.Run(fmt.Sprintf("%s/n=%d", mode, n), func(b *testing.B) {
				natstest.CheckLeaks(b)
				var c perNodeCost
				for b.Loop() {
					c = measurePerNode(b, n, mode == "shared")
				}
				c.report(b)
			})
		}
	}
}

// perNodeCost is one run's snapshots: before the Nodes (and before their
// connections), after the connections, and at rest.
type perNodeCost struct {
	n                      int
	mode                   string
	before, dialled, after restSnapshot
}

// restSnapshot is what the process and the server hold at one moment.
type restSnapshot struct {
	heapInuse, stackInuse uint64
	goroutines            int
	byEntry               map[string]int // goroutines by the function they started in
	entryFile             map[string]string
	heapServer            int64            // in-use bytes allocated under a nats-server frame
	heapClient            int64            // the rest
	heapByFunc            map[string]int64 // the client's, by allocating function
	heapByOwner           map[string]int64 // the client's, by the innermost go-cluster function
	subs                  uint32
	clients, consumers    int
	subsBySubject         map[string]int // the clients' subscriptions (Connz), by subject pattern
}

func measurePerNode(b *testing.B, n int, shared bool) perNodeCost {
	srv := natstest.RunServer(b)
	setup := srv.Connect(b)
	js, err := jetstream.New(setup)
	if err != nil {
		b.Fatal(err)
	}
	ttl := wire.DefaultLeaseTTL
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("pn%d", i)
	}
	// Buckets made ahead, as go-cluster init makes them: a bucket older
	// than its LeaseTTL is led at once (docs/design.md, P6).
	ctx, cancel := context.WithTimeout(context.Background(), perNodeWait)
	defer cancel()
	inParallel(b, n, perNodeStarts, func(i int) error {
		if _, _, err := store.Create(ctx, js, ids[i], store.Options{Replicas: 1, LeaseTTL: ttl}); err != nil {
			return err
		}
		_, _, err := store.CreateMembers(ctx, js, ids[i], store.Options{Replicas: 1, LeaseTTL: ttl})
		return err
	})
	made := time.Now()

	c := perNodeCost{n: n, mode: "own"}
	conns := make([]*nats.Conn, n)
	if shared {
		c.mode = "shared"
		nc := srv.Connect(b)
		for i := range conns {
			conns[i] = nc
		}
	}
	c.before = snapshot(srv)
	if !shared {
		inParallel(b, n, perNodeStarts, func(i int) error {
			nc, err := nats.Connect(srv.URL(), nats.Name(ids[i]), nats.MaxReconnects(-1))
			conns[i] = nc
			return err
		})
		defer func() {
			for _, nc := range conns {
				if nc != nil {
					nc.Close()
				}
			}
		}()
	}
	c.dialled = snapshot(srv)
	if dir := *perNodeProfiles; dir != "" {
		// The base for go tool pprof -diff_base: the heap before the Nodes.
		writeProfile(b, dir, fmt.Sprintf("pernode-%s-n%d-heap-before.pb.gz", c.mode, n), "heap", 0)
	}
	natstest.WaitFor(b, perNodeWait, func() bool { return time.Since(made) > ttl }, "the buckets' age")

	nodes := make([]*Node, n)
	defer func() {
		var wg sync.WaitGroup
		for _, node := range nodes {
			if node != nil {
				wg.Go(func() {
					sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_ = node.Stop(sctx)
				})
			}
		}
		wg.Wait()
	}()
	inParallel(b, n, perNodeStarts, func(i int) error {
		node, err := NewNode(Config{ClusterID: ids[i], NodeID: "a", Conn: conns[i], LeaseTTL: ttl,
			Logger: slog.New(slog.DiscardHandler)}, nil)
		if err != nil {
			return err
		}
		nodes[i] = node
		return node.Start(ctx)
	})
	natstest.WaitFor(b, perNodeWait, func() bool {
		for _, node := range nodes {
			if !node.IsLeader() {
				return false
			}
		}
		return true
	}, "not every Node leads")
	// At rest: two renewals each (the measurement's window, not a wait for
	// a condition).
	time.Sleep(2 * wire.DefaultRenewInterval)
	for i, node := range nodes {
		if !node.IsLeader() {
			b.Fatalf("%s lost its lease while at rest", ids[i])
		}
	}
	c.after = snapshot(srv)
	if dir := *perNodeProfiles; dir != "" {
		writeRestProfiles(b, dir, fmt.Sprintf("pernode-%s-n%d", c.mode, n))
	}
	return c
}

// inParallel runs fn(0) to fn(n-1), workers at a time, and fails b on the
// first error.
func inParallel(b *testing.B, n, workers int, fn func(i int) error) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					errs <- fmt.Errorf("%d: %w", i, err)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// snapshot collects garbage twice and reads the process and the server.
func snapshot(srv *natstest.Server) restSnapshot {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s := restSnapshot{heapInuse: m.HeapInuse, stackInuse: m.StackInuse, goroutines: runtime.NumGoroutine()}
	s.byEntry, s.entryFile = goroutinesByEntry()
	s.heapByFunc, s.heapByOwner = map[string]int64{}, map[string]int64{}
	for _, r := range memRecords() {
		bytes := r.InUseBytes()
		if bytes == 0 {
			continue
		}
		fn, owner, server, harness := allocationSite(r.Stack())
		switch {
		case harness:
			continue
		case server:
			s.heapServer += bytes
			continue
		}
		s.heapClient += bytes
		s.heapByFunc[fn] += bytes
		s.heapByOwner[owner] += bytes
	}
	ns := srv.NATS()
	s.subs, s.clients = ns.NumSubscriptions(), ns.NumClients()
	if jsz, err := ns.Jsz(&server.JSzOptions{}); err == nil {
		s.consumers = jsz.Consumers
	}
	s.subsBySubject = map[string]int{}
	if cz, err := ns.Connz(&server.ConnzOptions{Subscriptions: true, Limit: 1 << 16}); err == nil {
		for _, conn := range cz.Conns {
			for _, sub := range conn.Subs {
				s.subsBySubject[subjectPattern(sub)]++
			}
		}
	}
	return s
}

// clusterToken and uniqueToken are the parts of a subject that differ
// from one Node, or one subscription, to the next.
var (
	clusterToken = regexp.MustCompile(`pn[0-9]+`)
	uniqueToken  = regexp.MustCompile(`(^|\.)[A-Za-z0-9]{16,}(\.|$)`)
)

// subjectPattern is a subscription's subject with the cluster ID and the
// unique tokens (inboxes) replaced.
func subjectPattern(subject string) string {
	subject = clusterToken.ReplaceAllString(subject, "<id>")
	return uniqueToken.ReplaceAllString(subject, "$1<unique>$2")
}

// memRecords is the heap profile as of the last garbage collection.
func memRecords() []runtime.MemProfileRecord {
	n, _ := runtime.MemProfile(nil, true)
	for {
		p := make([]runtime.MemProfileRecord, n+64)
		var ok bool
		if n, ok = runtime.MemProfile(p, true); ok {
			return p[:n]
		}
	}
}

// mallocFrames are the runtime's allocating functions, which name no
// allocation site.
var mallocFrames = []string{"runtime.mallocgc", "runtime.newobject", "runtime.growslice", "runtime.makeslice"}

// allocationSite names an allocation's function (its first frame outside
// the runtime), its owner (the innermost frame of this module, if any),
// whether a frame of the server's is on its stack, and whether the
// benchmark's own measuring made it (the snapshots kept for the report).
func allocationSite(stack []uintptr) (fn, owner string, server, harness bool) {
	frames := runtime.CallersFrames(stack)
	first := ""
	for {
		f, more := frames.Next()
		if first == "" && !slices.Contains(mallocFrames, f.Function) {
			first = f.Function // runtime.malg: a goroutine's descriptor, made on the system stack
		}
		if fn == "" && !strings.HasPrefix(f.Function, "runtime.") {
			fn = f.Function
		}
		if owner == "" && strings.HasPrefix(f.Function, libraryPrefix) {
			owner = f.Function
		}
		if strings.HasPrefix(f.Function, serverPrefix) {
			server = true
		}
		if f.Function == libraryPrefix+".snapshot" {
			harness = true
		}
		if !more {
			break
		}
	}
	if fn == "" {
		fn = first
	}
	if owner == "" {
		owner = "(no go-cluster frame) " + fn
	}
	return fn, owner, server, harness
}

// goroutinesByEntry counts goroutines by the function each started in (the
// last frame of its stack in the debug=1 goroutine profile), with that
// frame's file.
func goroutinesByEntry() (map[string]int, map[string]string) {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	counts, files := map[string]int{}, map[string]string{}
	for _, rec := range strings.Split(buf.String(), "\n\n") {
		sc := bufio.NewScanner(strings.NewReader(rec))
		count, entry, file := 0, "", ""
		for sc.Scan() {
			line := sc.Text()
			if c, _, ok := strings.Cut(line, " @ "); ok && count == 0 {
				count, _ = strconv.Atoi(c)
				continue
			}
			fields := strings.Split(line, "\t")
			if len(fields) == 4 && fields[0] == "#" {
				entry, _, _ = strings.Cut(fields[2], "+0x")
				file = strings.TrimSpace(fields[3])
			}
		}
		if count > 0 && entry != "" {
			counts[entry] += count
			files[entry] = file
		}
	}
	return counts, files
}

// writeRestProfiles writes the goroutine profile (debug=1) and the heap
// profile to dir, named after the run.
func writeRestProfiles(b *testing.B, dir, name string) {
	writeProfile(b, dir, name+"-goroutine.txt", "goroutine", 1)
	writeProfile(b, dir, name+"-heap.pb.gz", "heap", 0)
}

// writeProfile writes one profile to dir/file.
func writeProfile(b *testing.B, dir, file, profile string, debug int) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, file))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.Lookup(profile).WriteTo(f, debug); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// report gives the figures per Node as the benchmark's metrics and logs
// where the goroutines and the client's heap go.
func (c perNodeCost) report(b *testing.B) {
	n := float64(c.n)
	a, z, d := c.after, c.before, c.dialled
	per := func(x, y int64) float64 { return float64(x-y) / n }
	b.ReportMetric(per(int64(a.heapInuse), int64(z.heapInuse)), "heap-B/node")
	b.ReportMetric(per(a.heapClient, z.heapClient), "client-heap-B/node")
	b.ReportMetric(per(a.heapServer, z.heapServer), "server-heap-B/node")
	b.ReportMetric(per(int64(a.stackInuse), int64(z.stackInuse)), "stack-B/node")
	b.ReportMetric(per(int64(a.goroutines), int64(z.goroutines)), "goroutines/node")
	var server, client int
	for fn, k := range a.byEntry {
		if strings.HasPrefix(fn, serverPrefix) {
			server += k - z.byEntry[fn]
		} else {
			client += k - z.byEntry[fn]
		}
	}
	for fn, k := range z.byEntry {
		if _, ok := a.byEntry[fn]; !ok {
			if strings.HasPrefix(fn, serverPrefix) {
				server -= k
			} else {
				client -= k
			}
		}
	}
	b.ReportMetric(float64(client)/n, "client-goroutines/node")
	b.ReportMetric(float64(server)/n, "server-goroutines/node")
	b.ReportMetric(per(int64(a.subs), int64(z.subs)), "subs/node")
	b.ReportMetric(per(int64(a.consumers), int64(z.consumers)), "consumers/node")
	b.ReportMetric(per(int64(a.clients), int64(z.clients)), "conns/node")
	if c.mode == "own" {
		b.ReportMetric(per(d.heapClient, z.heapClient), "conn-client-heap-B/node")
		b.ReportMetric(per(int64(d.goroutines), int64(z.goroutines)), "conn-goroutines/node")
	}

	var lines []string
	lines = append(lines, fmt.Sprintf("%s, %d Nodes: goroutines per Node at rest, by the function they started in", c.mode, c.n))
	for _, e := range topDeltas(toInt64(a.byEntry), toInt64(z.byEntry), 0) {
		lines = append(lines, fmt.Sprintf("  %6.2f  %s  (%s)", float64(e.delta)/n, e.key, a.entryFile[e.key]))
	}
	lines = append(lines, "the clients' subscriptions per Node (Connz), by subject")
	for _, e := range topDeltas(toInt64(a.subsBySubject), toInt64(z.subsBySubject), 0) {
		lines = append(lines, fmt.Sprintf("  %6.2f  %s", float64(e.delta)/n, e.key))
	}
	lines = append(lines, "client heap per Node at rest (B), by allocating function, top 15")
	for _, e := range topDeltas(a.heapByFunc, z.heapByFunc, 15) {
		lines = append(lines, fmt.Sprintf("  %8.0f  %s", float64(e.delta)/n, e.key))
	}
	lines = append(lines, "client heap per Node at rest (B), by the innermost go-cluster function on the stack, top 25")
	for _, e := range topDeltas(a.heapByOwner, z.heapByOwner, 25) {
		lines = append(lines, fmt.Sprintf("  %8.0f  %s", float64(e.delta)/n, e.key))
	}
	lines = append(lines, "client heap per Node at rest (B), by that function's package")
	for _, e := range topDeltas(byPackage(a.heapByOwner), byPackage(z.heapByOwner), 0) {
		lines = append(lines, fmt.Sprintf("  %8.0f  %s", float64(e.delta)/n, e.key))
	}
	b.Log(strings.Join(lines, "\n"))
}

// delta is one key's change between two snapshots.
type delta struct {
	key   string
	delta int64
}

// topDeltas lists the keys whose value changed from before to after, the
// largest change first; at most limit of them (0: all).
func topDeltas(after, before map[string]int64, limit int) []delta {
	var ds []delta
	for k, v := range after {
		if v != before[k] {
			ds = append(ds, delta{k, v - before[k]})
		}
	}
	for k, v := range before {
		if _, ok := after[k]; !ok {
			ds = append(ds, delta{k, -v})
		}
	}
	slices.SortFunc(ds, func(x, y delta) int {
		if x.delta != y.delta {
			if x.delta > y.delta {
				return -1
			}
			return 1
		}
		return strings.Compare(x.key, y.key)
	})
	if limit > 0 && len(ds) > limit {
		ds = ds[:limit]
	}
	return ds
}

// byPackage sums the client's heap by the package of each owner: the
// package of the innermost go-cluster function, or of the allocating
// function where there is none.
func byPackage(byOwner map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for owner, v := range byOwner {
		fn := strings.TrimPrefix(owner, "(no go-cluster frame) ")
		pkg := fn
		if slash := strings.LastIndex(fn, "/"); slash >= 0 {
			if dot := strings.Index(fn[slash:], "."); dot >= 0 {
				pkg = fn[:slash+dot]
			}
		} else if dot := strings.Index(fn, "."); dot >= 0 {
			pkg = fn[:dot]
		}
		if fn != owner {
			pkg = "(no go-cluster frame) " + pkg
		}
		out[pkg] += v
	}
	return out
}

func toInt64(m map[string]int) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = int64(v)
	}
	return out
}
