package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Options shape a run. The zero value is the protocol's own bounds.
type Options struct {
	// DriftBound is the largest clock-rate error of a node (0.04 when
	// zero; design.md §3.4 needs below M/(2·TTL−M), about 5.3 % with the
	// default M).
	DriftBound float64
	// MarginZero runs every node with SafetyMargin 0.
	MarginZero bool
	// MixedTTL forces LeaseTTLs of 1s and 3s, SameTTL 1s for every node;
	// otherwise a seed picks.
	MixedTTL, SameTTL bool
	// Exclude names fault kinds this run never injects ("purge",
	// "raw-purge", "ttl-change", ...: see faultNames).
	Exclude []string
	// Knobs remove invariants of every node's machine: the negative
	// controls (election.Knobs).
	Knobs election.Knobs
	// ClockBack lets the creator of the bucket created again read a time
	// before the previous creation: past what docs/design.md §3.6
	// assumes of the clocks, a negative control of the epoch check.
	ClockBack bool
	// NoFirstSeq creates every bucket with revisions from 1, as a tool
	// other than the library would, and an epoch_base at its creation
	// (init --rebase): epochs grow across buckets, revisions repeat. The
	// negative control of revisions that name their incarnation (§2.1).
	NoFirstSeq bool
	// CeilingUnreadIsNone answers a Confirm that could not read the
	// members bucket's ceiling without it, as if none were kept: the
	// negative control of failing such a Confirm (docs/design.md §2.7).
	CeilingUnreadIsNone bool
	// TraceNode adds every event and effect of this node to the trace.
	TraceNode string
	// FaultPhase and QuietPhase are how long faults are injected, and how
	// long the run goes on without them (20s and 10s when zero).
	FaultPhase, QuietPhase time.Duration
}

// Outcome is what one seed's run found.
type Outcome struct {
	Seed       uint64
	Violations []string
	Trace      []string // the last lines of the run's trace
	Tenures    int
	Events     int
	Faults     int           // faults injected
	Simulated  time.Duration // simulated real time the run covered
	Upgraded   bool          // the cluster moved to the next protocol version (upgrade.go)
}

// Failed reports whether the checker found a violation.
func (r Outcome) Failed() bool { return len(r.Violations) > 0 }

func (r Outcome) String() string {
	s := fmt.Sprintf("seed %d: %d tenures, %d events", r.Seed, r.Tenures, r.Events)
	for _, v := range r.Violations {
		s += "\n  VIOLATION: " + v
	}
	if r.Failed() {
		s += "\n  trace (last lines):"
		for _, l := range r.Trace {
			s += "\n    " + l
		}
		s += fmt.Sprintf("\n  replay: -sim.seed=%d", r.Seed)
	}
	return s
}

// excluded says the run never injects the fault kind name.
func (o Options) excluded(name string) bool {
	for _, x := range o.Exclude {
		if x == name {
			return true
		}
	}
	return false
}

// Run simulates one seed of election machines.
func Run(seed uint64, opt Options) Outcome { return runWith(seed, opt, machines(opt.Knobs)) }

// runWith simulates one seed with the logic factory makes.
func runWith(seed uint64, opt Options, factory factory) Outcome {
	out, first := run(seed, opt, factory, nil)
	if out.Failed() {
		// The same seed again, the same schedule: this time with its trace,
		// the lines before the first violation and a few after.
		tr := &trace{from: first - 14*time.Second, to: first + 300*time.Millisecond, keep: 800}
		out, _ = run(seed, opt, factory, tr)
		out.Trace = tr.lines()
	}
	return out
}

func run(seed uint64, opt Options, factory factory, tr *trace) (Outcome, time.Duration) {
	w := newWorld(seed, opt, factory)
	w.trace = tr
	w.schedule()
	w.loop(w.quietAt + w.opt.QuietPhase)
	// Hooks slower than the quiet phase push the liveness bound out
	// (checker.quiet), and so do step-downs in the quiet phase: run on
	// until it can be judged.
	for end := w.chk.judgedBy(w.quietAt, maxTTL(w)); end > w.now; end = w.chk.judgedBy(w.quietAt, maxTTL(w)) {
		w.loop(end)
	}
	w.checkUpgraded()
	v := w.chk.finish(w.now, w.quietAt, maxTTL(w))
	return Outcome{Seed: seed, Violations: v, Tenures: len(w.chk.tenures), Events: w.events,
		Faults: w.faults, Simulated: w.now, Upgraded: w.versions.top > wire.ProtocolHi}, w.chk.first
}

// world is one run: the event queue, the bucket, the nodes, the checker.
type world struct {
	seed    uint64
	opt     Options
	rnd     *rand.Rand
	factory factory
	now     time.Duration // simulated real time
	q       eventQueue
	seq     uint64
	events  int
	faults  int // faults injected
	kv      *kv
	procs   []*proc
	chk     *checker
	trace   *trace
	quietAt time.Duration
	tokens  uint64
	ttls    []time.Duration
	slowNet bool // some network delays are long
	// servers draws the clocks of the servers that create the bucket:
	// a stream of its own, so that the faults' schedule is the same with
	// or without it.
	servers *rand.Rand
	// purges draws the raw purges (rawpurge.go), a stream of its own for
	// the same reason: the seeds recorded before them replay as they did
	// where the seed injects none.
	purges   *rand.Rand
	rawPurge bool // this seed purges the key from the stream by subject
	// durable is the cluster's ceiling (the account bucket's key, or a
	// members bucket's lease_ttl_max): raised with the bucket's TTL, never
	// lost with it (docs/design.md §2.7).
	durable time.Duration
	// zombies draws the servers behind on a bucket deleted or created
	// again (zombie.go), creators the TTL a bucket created again gets
	// (creatorttl.go): streams of their own.
	zombies     *rand.Rand
	zombie      bool   // this seed has servers behind
	stale       *stale // the copy a server behind answers for
	creators    *rand.Rand
	creatorTTLs bool // this seed's buckets get their creator's TTL
	// ceilingUnreads draws the Confirms that cannot read the cluster's
	// ceiling (ceilingunread.go), until ceilingUnreadUntil.
	ceilingUnreads     *rand.Rand
	ceilingUnread      bool // this seed has them
	ceilingUnreadUntil time.Duration
	versions           versions // member records and the cluster's version (upgrade.go)
}

func newWorld(seed uint64, opt Options, factory factory) *world {
	if opt.DriftBound == 0 {
		opt.DriftBound = 0.04
	}
	if opt.FaultPhase == 0 {
		opt.FaultPhase = 20 * time.Second
	}
	if opt.QuietPhase == 0 {
		opt.QuietPhase = 10 * time.Second
	}
	w := &world{seed: seed, opt: opt, factory: factory, rnd: rand.New(rand.NewPCG(seed, 0x5eed)),
		servers: rand.New(rand.NewPCG(seed, 0xc10c)), purges: rand.New(rand.NewPCG(seed, 0x9a9e)),
		kv: newKV(0, !opt.NoFirstSeq), chk: newChecker(), versions: versions{members: map[string]member{}, named: map[int]time.Duration{}}}
	w.quietAt = opt.FaultPhase
	w.zombies, w.zombie = newZombies(seed, opt)
	w.creators, w.creatorTTLs = newCreators(seed, opt)
	w.ceilingUnreads, w.ceilingUnread = newCeilingUnreads(seed, opt)
	w.makeProcs()
	// The bucket's TTL metadata (I2): the first node's LeaseTTL, as the
	// node that creates the bucket writes it, kept across the bucket's
	// incarnations.
	w.kv.ttl, w.kv.maxTTL, w.durable = w.ttls[0], w.ttls[0], w.ttls[0]
	return w
}

type qItem struct {
	at  time.Duration
	seq uint64
	f   func()
}

type eventQueue []qItem

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(qItem)) }
func (q *eventQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// at runs f at simulated time t (now, if t is in the past).
func (w *world) at(t time.Duration, f func()) {
	w.seq++
	heap.Push(&w.q, qItem{at: max(t, w.now), seq: w.seq, f: f})
}

func (w *world) loop(until time.Duration) {
	for w.q.Len() > 0 {
		it := heap.Pop(&w.q).(qItem)
		if it.at > until {
			heap.Push(&w.q, it) // the run may go on (run: judgedBy)
			w.now = until
			return
		}
		w.now = it.at
		w.events++
		it.f()
		if w.events > 5_000_000 {
			w.chk.violate(w.now, "the run did not end: more than 5,000,000 events")
			return
		}
	}
	w.now = until
}

// logf adds a line to the trace, when the run keeps one.
func (w *world) logf(format string, args ...any) {
	if w.trace == nil || w.now < w.trace.from || w.now > w.trace.to {
		return
	}
	w.trace.add(fmt.Sprintf("%9.6fs ", w.now.Seconds()) + fmt.Sprintf(format, args...))
}

// delay is one network hop: usually up to 5 ms, sometimes (a slow
// network) up to 300 ms.
func (w *world) delay(p *proc) time.Duration {
	d := 100*time.Microsecond + time.Duration(w.rnd.Int64N(int64(5*time.Millisecond)))
	if p.slow || (w.slowNet && w.rnd.IntN(20) == 0) {
		d += time.Duration(w.rnd.Int64N(int64(300 * time.Millisecond)))
	}
	return d
}

func (w *world) dur(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(w.rnd.Int64N(int64(hi-lo)+1))
}
