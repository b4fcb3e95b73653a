package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// Options configure a run. Zero fields take the defaults noted.
type Options struct {
	Seed          uint64        // seed of the schedule; 0 picks one from the clock (the Report says which)
	Duration      time.Duration // how long faults are injected; default 20s
	Nodes         int           // default 5
	LeaseTTL      time.Duration // default 1s
	RenewInterval time.Duration // default LeaseTTL/4
	// MeanPause is the mean of the random pause between two faults; the
	// pause is exponentially distributed, capped at 4 x MeanPause. Default
	// LeaseTTL.
	MeanPause time.Duration
	Kinds     []FaultKind // faults to inject, chosen uniformly; default DefaultKinds
	ClusterID string      // default "chaos"
	// LongTTLNodes is how many nodes are configured with a LeaseTTL of 3
	// to 5 x LeaseTTL (drawn from the seed; RenewInterval scaled alike).
	// They follow the bucket's LeaseTTL like every node (docs/design.md
	// I2), but create the bucket, when a Start finds none, with their
	// own. Default 1 (of 5); -1: none.
	LongTTLNodes int
	// OutOfBandGap is the least time between two out-of-band faults (see
	// FaultKind.OutOfBand), so that the cluster can elect in between; one
	// drawn earlier is skipped. Default 2 x the longest TTL of the run:
	// correct nodes elect within about one (they wait the bucket's
	// ceiling for anything that is not a record in range).
	OutOfBandGap time.Duration
	// RecoveryLimit bounds the time from healing every fault to a leader:
	// longer is a liveness failure (Report.Liveness). Default 10 x the
	// longest LeaseTTL, at least 20s (a restarted JetStream server may take
	// seconds to serve the stream again).
	RecoveryLimit time.Duration
	Logger        *slog.Logger // the nodes' logger; default discards
	// Log, if set, receives one line per fault and heal as they happen.
	Log func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	if o.Duration == 0 {
		o.Duration = 20 * time.Second
	}
	if o.Nodes == 0 {
		o.Nodes = 5
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = time.Second
	}
	if o.RenewInterval == 0 {
		o.RenewInterval = o.LeaseTTL / 4
	}
	if o.MeanPause == 0 {
		o.MeanPause = o.LeaseTTL
	}
	if len(o.Kinds) == 0 {
		o.Kinds = DefaultKinds
	}
	if o.LongTTLNodes == 0 {
		o.LongTTLNodes = max(1, o.Nodes/5)
	}
	o.LongTTLNodes = min(max(o.LongTTLNodes, 0), o.Nodes)
	if o.ClusterID == "" {
		o.ClusterID = "chaos"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	return o
}

// run is the state of one chaos run. The schedule runs on the test's
// goroutine; writers and the sampler run on their own.
type run struct {
	t       testing.TB
	opts    Options
	cluster *natstest.Cluster
	js      jetstream.JetStream
	members []*member
	maxTTL  time.Duration // the longest TTL of the run: of any member, and longTTL when FaultTTLGarbage may use it
	longTTL time.Duration // the bucket's LeaseTTL while FaultTTLGarbage runs: 3 to 5 x LeaseTTL
	checker *Checker
	fence   *Fence
	samples sampler
	writers sync.WaitGroup

	state     stateLedger    // every state write the leaders made
	order     *orderRecorder // the bucket stream's total order
	commitOK  atomic.Bool    // the bucket allowed atomic batches at the start: writers Commit too
	deletions []time.Time    // bucket deletions by FaultBucketRecreate (schedule goroutine only)

	rng   *rand.Rand // the schedule's, used on the test goroutine only
	rngMu sync.Mutex // guards wrng
	wrng  *rand.Rand // writers' jitter

	start   time.Time
	heals   []heal
	busy    map[*member]int // per member: faults (and restarts) not healed yet
	faults  map[FaultKind]int
	skipped map[FaultKind]int
	log     []LogLine

	lastOutOfBand time.Time // the last out-of-band fault
	quorumLosses  []outage  // FaultQuorumLoss: when two servers were down
	ttlFault      bool      // a FaultTTLGarbage is under way (longttl.go)
	healing       bool      // every fault is being healed: the schedule is over
	routesCut     bool      // a FaultRoutePartition, or a recreate's cut of the stream leader, is not healed yet
	lastRecreate  time.Time // the last deletion or creation of the bucket by FaultBucketRecreate
	deletedAt     time.Time // a recreate fault deleted the bucket, and it has not been seen since (bucketAbsent)

	started  chan startResult // Nodes started off the schedule's goroutine
	starting int              // starts not reported yet

	statsMu       sync.Mutex
	validateErrs  map[string]int
	nodeFailures  []string
	expectedStops []string
	liveness      []string
}

// startResult reports a Node start made by startAsync.
type startResult struct {
	m     *member
	err   error
	began time.Time
}

// Run runs the nodes under the schedule for opts.Duration, heals every
// fault, checks that a leader is elected again, stops the nodes, checks the
// invariants and returns the Report. It fails t on setup errors; it does not
// fail t on violations or liveness failures: the caller decides (see
// Report.Violations and Report.Liveness).
func Run(t testing.TB, opts Options) *Report {
	t.Helper()
	r := setUp(t, opts)
	opts = r.opts

	stopSampler := make(chan struct{})
	samplerDone := make(chan struct{})
	go func() { defer close(samplerDone); r.runSampler(stopSampler) }()

	r.start = time.Now()
	r.schedule(r.start.Add(opts.Duration))
	faultsEnd := time.Now()
	r.healAll()
	healed := time.Now()
	recovered := r.operateUntil(healed.Add(opts.RecoveryLimit), func() bool { return r.leader() != nil })
	recovery := time.Since(healed)
	if recovered {
		// A little steady state: the leader keeps writing.
		r.operateUntil(time.Now().Add(2*r.maxTTL), func() bool { return false })
	} else {
		r.livenessFailure(fmt.Sprintf("no leader %v after every fault healed (limit %v = %.1f x the longest LeaseTTL %v): the cluster wedged\n%s",
			recovery.Round(time.Millisecond), opts.RecoveryLimit, float64(opts.RecoveryLimit)/float64(r.maxTTL), r.maxTTL, r.snapshot()))
	}

	close(stopSampler)
	<-samplerDone
	end := time.Now()
	r.stopAll()
	r.writers.Wait()
	return r.report(faultsEnd, end, recovery, recovered)
}

// setUp starts the servers and the nodes, and waits for the first leader.
// Whatever still runs is stopped when t ends.
func setUp(t testing.TB, opts Options) *run {
	t.Helper()
	opts = opts.withDefaults()
	r := &run{
		t:            t,
		opts:         opts,
		checker:      NewChecker(),
		fence:        NewFence(),
		rng:          rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		wrng:         rand.New(rand.NewPCG(opts.Seed+1, 0)),
		busy:         map[*member]int{},
		faults:       map[FaultKind]int{},
		skipped:      map[FaultKind]int{},
		validateErrs: map[string]int{},
		started:      make(chan startResult, 64),
	}
	// Routes through proxies, for FaultRoutePartition.
	r.cluster = natstest.RunClusterWithRouteProxies(t, 3, func(target string) natstest.RouteProxy { return faultproxy.New(t, target) })
	nc := r.cluster.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("chaos: jetstream: %v", err)
	}
	r.js = js
	// Its own connection, not behind a fault proxy: it must see every
	// message. It starts before the nodes create the bucket, to read it
	// from sequence 1.
	ojs, err := jetstream.New(r.cluster.Connect(t))
	if err != nil {
		t.Fatalf("chaos: jetstream: %v", err)
	}
	// Its lookups ask each server, on a connection bound to it.
	var lookups []jetstream.JetStream
	for _, srv := range r.cluster.Servers() {
		ljs, err := jetstream.New(srv.Connect(t, nats.IgnoreDiscoveredServers()))
		if err != nil {
			t.Fatalf("chaos: jetstream: %v", err)
		}
		lookups = append(lookups, ljs)
	}
	r.order = startOrderRecorder(ojs, r.bucket(), lookups...)
	t.Cleanup(r.order.close)
	ttls, renews, long := memberTTLs(opts)
	r.longTTL = long
	if slices.Contains(opts.Kinds, FaultTTLGarbage) {
		r.maxTTL = long
	}
	for i := range opts.Nodes {
		m := &member{id: fmt.Sprintf("node%d", i+1), r: r, ttl: ttls[i], renew: renews[i]}
		for _, s := range r.cluster.Servers() {
			m.proxies = append(m.proxies, faultproxy.New(t, s.Addr()))
		}
		r.members = append(r.members, m)
		r.maxTTL = max(r.maxTTL, m.ttl)
	}
	if r.opts.OutOfBandGap == 0 {
		r.opts.OutOfBandGap = 2 * r.maxTTL
	}
	if r.opts.RecoveryLimit == 0 {
		r.opts.RecoveryLimit = max(10*r.maxTTL, 20*time.Second)
	}
	opts = r.opts
	opts.Log("chaos: seed %d, %d nodes, LeaseTTL %v, RenewInterval %v, duration %v, faults %v",
		opts.Seed, opts.Nodes, opts.LeaseTTL, opts.RenewInterval, opts.Duration, opts.Kinds)
	if opts.LongTTLNodes > 0 {
		opts.Log("chaos: LeaseTTL/RenewInterval per node: %s", r.ttlSummary())
	}
	t.Cleanup(r.shutdown)
	// The bucket is made ahead, as go-cluster init would, with the
	// cluster's LeaseTTL: the long-configured nodes follow it.
	if err := r.createBucket(); err != nil {
		t.Fatalf("chaos: create bucket: %v", err)
	}
	r.lastRecreate = time.Time{} // not a fault
	for _, m := range r.members {
		if err := m.start(); err != nil {
			t.Fatalf("chaos: %v", err)
		}
	}
	natstest.WaitFor(t, 30*time.Second, func() bool { return r.leader() != nil }, "chaos: no first leader")
	opts.Log("chaos: servers n0..n%d, nodes node1..node%d; first leader %s", len(r.cluster.Servers())-1, opts.Nodes, r.leader().id)
	r.enableCommit()
	return r
}

// enableCommit lets the bucket take atomic batches, so that the leaders'
// state writes include Commits; without it they Put only.
func (r *run) enableCommit() {
	l := r.leader()
	if l == nil {
		return
	}
	n := l.current()
	if n == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.State().EnableCommit(ctx); err != nil {
		r.opts.Log("chaos: EnableCommit: %v; state writes are Puts only", err)
		return
	}
	r.commitOK.Store(true)
}

// memberTTLs draws which nodes are configured with a long LeaseTTL, and
// how long, and the long TTL of FaultTTLGarbage, from the seed (a stream
// of its own, so the schedule draws the same faults).
func memberTTLs(opts Options) (ttls, renews []time.Duration, long time.Duration) {
	rng := rand.New(rand.NewPCG(opts.Seed+2, 0))
	ttls = make([]time.Duration, opts.Nodes)
	renews = make([]time.Duration, opts.Nodes)
	for i := range ttls {
		ttls[i], renews[i] = opts.LeaseTTL, opts.RenewInterval
	}
	for _, i := range rng.Perm(opts.Nodes)[:opts.LongTTLNodes] {
		// Scaling both keeps RenewInterval <= LeaseTTL/3, and the defaults
		// (RequestTimeout = RenewInterval, SafetyMargin = LeaseTTL/10)
		// keep RequestTimeout <= LeaseTTL - SafetyMargin.
		f := 3 + 2*rng.Float64()
		ttls[i] = time.Duration(f * float64(opts.LeaseTTL)).Round(time.Millisecond)
		renews[i] = time.Duration(f * float64(opts.RenewInterval)).Round(time.Millisecond)
	}
	long = time.Duration((3 + 2*rng.Float64()) * float64(opts.LeaseTTL)).Round(time.Millisecond)
	return ttls, renews, long
}

// ttlSummary lists each member's LeaseTTL and RenewInterval.
func (r *run) ttlSummary() string {
	parts := make([]string, len(r.members))
	for i, m := range r.members {
		parts[i] = fmt.Sprintf("%s=%v/%v", m.id, m.ttl, m.renew)
	}
	return strings.Join(parts, " ")
}

// operateUntil keeps the harness running (heals due, restarts of nodes
// that stopped) until cond holds or deadline passes, and reports whether
// cond held.
func (r *run) operateUntil(deadline time.Time, cond func() bool) bool {
	for {
		r.collectStarts()
		r.checkFailures()
		r.runDueHeals(time.Now())
		if cond() {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		timer := time.NewTimer(min(time.Until(deadline), 5*time.Millisecond))
		<-timer.C
	}
}

// schedule injects faults until deadline, and heals them when due.
func (r *run) schedule(deadline time.Time) {
	nextFault := time.Now().Add(r.pause())
	for {
		r.collectStarts()
		r.checkFailures()
		now := time.Now()
		if !now.Before(deadline) {
			return
		}
		due := earliestHeal(r.heals)
		wake := minTime(nextFault, deadline)
		if !due.IsZero() && due.Before(wake) {
			wake = due
		}
		if d := time.Until(wake); d > 0 {
			timer := time.NewTimer(min(d, 50*time.Millisecond)) // also polls for failed nodes
			<-timer.C
			continue
		}
		if r.runDueHeals(time.Now()) {
			continue
		}
		if !time.Now().Before(nextFault) {
			k := r.opts.Kinds[r.rngIntN(len(r.opts.Kinds))]
			if what := r.inject(k); what != "" {
				r.faults[k]++
				r.logf("%s", what)
			} else {
				r.skipped[k]++
			}
			nextFault = time.Now().Add(r.pause())
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func earliestHeal(hs []heal) time.Time {
	var out time.Time
	for _, h := range hs {
		if out.IsZero() || h.at.Before(out) {
			out = h.at
		}
	}
	return out
}

// runDueHeals runs the heals due at now, in time order.
func (r *run) runDueHeals(now time.Time) bool {
	sort.SliceStable(r.heals, func(i, j int) bool { return r.heals[i].at.Before(r.heals[j].at) })
	ran := false
	for len(r.heals) > 0 && !r.heals[0].at.After(now) {
		h := r.heals[0]
		r.heals = r.heals[1:]
		h.fn()
		r.logf("heal: %s", h.what)
		ran = true
	}
	return ran
}

// healAll runs every pending heal now, and restarts what is down.
func (r *run) healAll() {
	r.logf("faults end; healing everything")
	r.healing = true
	giveUp := time.Now().Add(2 * time.Minute)
	for (len(r.heals) > 0 || r.starting > 0) && time.Now().Before(giveUp) {
		r.runDueHeals(time.Now().Add(time.Hour))
		if r.starting > 0 {
			res := <-r.started
			r.starting--
			r.startDone(res)
		}
	}
	for _, m := range r.members {
		m.stall.open()
		m.restore()
	}
	r.healRoutes()
	for i, s := range r.cluster.Servers() {
		if s.NATS() == nil {
			r.cluster.Restart(r.t, i)
		}
	}
	r.ensureBucket()
	r.checkFailures()
	for _, m := range r.members {
		for attempt := 1; m.current() == nil && attempt <= 3; attempt++ {
			if err := m.start(); err != nil {
				r.nodeFailure(fmt.Sprintf("%s could not start after healing (attempt %d): %v", m.id, attempt, err))
			}
		}
	}
}

// startAsync starts a new Node for m off the schedule's goroutine, so that
// a slow Start does not hold up the schedule; m is busy meanwhile.
func (r *run) startAsync(m *member) {
	r.busy[m]++
	r.starting++
	began := time.Now()
	go func() { r.started <- startResult{m: m, err: m.start(), began: began} }()
}

// collectStarts handles the starts that have finished.
func (r *run) collectStarts() {
	for {
		select {
		case res := <-r.started:
			r.starting--
			r.startDone(res)
		default:
			return
		}
	}
}

// startDone records a finished start. A Node that cannot start while the
// cluster is reachable is a library failure; it is retried a TTL later.
func (r *run) startDone(res startResult) {
	r.busy[res.m]--
	if res.err == nil {
		return
	}
	msg := fmt.Sprintf("%s could not start: %v", res.m.id, res.err)
	switch {
	case r.recentRecreate() || r.bucketAbsent():
		r.expectedStop(msg + " (expected: the bucket was deleted and created again, or could not be yet)")
	case r.quorumLostDuring(res.began, time.Now()):
		r.expectedStop(msg + " (expected: a quorum-loss fault left JetStream without a quorum for most of the Start)")
	default:
		r.nodeFailure(msg)
	}
	r.busy[res.m]++
	r.later(r.opts.LeaseTTL, "start "+res.m.id+" again", func() {
		r.busy[res.m]--
		if res.m.current() == nil {
			r.startAsync(res.m)
		}
	})
}

// nodeFailure records a library failure seen by the harness.
func (r *run) nodeFailure(msg string) {
	r.statsMu.Lock()
	r.nodeFailures = append(r.nodeFailures, msg)
	r.statsMu.Unlock()
	r.logf("%s", msg)
}

// checkFailures notices Nodes that stopped on their own, records why, and
// schedules a new Node in their place. A Node stopping on its own under
// transient faults is a failure of the library; one stopping with the
// permanent error an out-of-band fault calls for is expected (see
// expectedStopCause).
func (r *run) checkFailures() {
	for _, m := range r.members {
		if err, failed := m.failed(); failed {
			msg := fmt.Sprintf("%s stopped on its own: %v", m.instance(), err)
			if why := r.expectedStopCause(err); why != "" {
				r.expectedStop(msg + " (expected: " + why + ")")
			} else {
				r.nodeFailure(msg)
			}
			r.busy[m]++
			r.later(r.opts.LeaseTTL, "start "+m.id, func() {
				r.busy[m]--
				if m.current() == nil {
					r.startAsync(m)
				}
			})
		}
	}
}

// expectedStop records a Node that stopped as the library documents for a
// fault the run injected.
func (r *run) expectedStop(msg string) {
	r.statsMu.Lock()
	r.expectedStops = append(r.expectedStops, msg)
	r.statsMu.Unlock()
	r.logf("%s", msg)
}

// livenessFailure records that the cluster did not make progress in time.
func (r *run) livenessFailure(msg string) {
	r.statsMu.Lock()
	r.liveness = append(r.liveness, msg)
	r.statsMu.Unlock()
	first, _, _ := strings.Cut(msg, "\n") // the report has the rest
	r.logf("liveness: %s", first)
}

// stopAll stops every node gracefully.
func (r *run) stopAll() {
	for _, m := range r.members {
		if err := m.stop(); err != nil {
			r.t.Errorf("chaos: stop %s: %v", m.id, err)
		}
	}
}

// shutdown is the last resort on a failed run: stop what still runs.
func (r *run) shutdown() {
	for ; r.starting > 0; r.starting-- {
		<-r.started
	}
	for _, m := range r.members {
		m.stall.open()
		_ = m.stop()
	}
	r.writers.Wait()
	r.order.close()
}

// later schedules a heal d from now.
func (r *run) later(d time.Duration, what string, fn func()) {
	r.heals = append(r.heals, heal{at: time.Now().Add(d), what: what, fn: fn})
}

// leader returns the member whose Node leads now, or nil.
func (r *run) leader() *member {
	for _, m := range r.members {
		if n := m.current(); n != nil && n.IsLeader() {
			return m
		}
	}
	return nil
}

func (r *run) leaderMark(m *member) string {
	if n := m.current(); n != nil && n.IsLeader() {
		return " (leader)"
	}
	return ""
}

// pickMember picks a running member not under another fault: the leader
// half of the time when preferLeader is set.
func (r *run) pickMember(preferLeader bool) *member {
	if preferLeader && r.chance(0.5) {
		if l := r.leader(); l != nil && r.busy[l] == 0 {
			return l
		}
	}
	var free []*member
	for _, m := range r.members {
		if r.busy[m] == 0 && m.current() != nil {
			free = append(free, m)
		}
	}
	if len(free) == 0 {
		return nil
	}
	return free[r.rngIntN(len(free))]
}

// span is a random duration between lo and hi LeaseTTLs.
func (r *run) span(lo, hi float64) time.Duration {
	f := lo + r.rng.Float64()*(hi-lo)
	return (time.Duration(f * float64(r.opts.LeaseTTL))).Round(time.Millisecond)
}

// pause is the random pause before the next fault.
func (r *run) pause() time.Duration {
	f := math.Min(r.rng.ExpFloat64(), 4)
	return time.Duration(f * float64(r.opts.MeanPause))
}

func (r *run) chance(p float64) bool { return r.rng.Float64() < p }

func (r *run) rngIntN(n int) int { return r.rng.IntN(n) }

func (r *run) logf(format string, args ...any) {
	line := LogLine{At: time.Since(r.start), Text: fmt.Sprintf(format, args...)}
	r.log = append(r.log, line)
	r.opts.Log("%s", line)
}
