package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	next "github.com/ozanturksever/go-cluster/internal/election/v2"
)

// Options shape a run. The zero value is the protocol's own bounds.
type Options struct {
	// DriftBound is the largest clock-rate error of a node (0.04 when
	// zero; §3.4 needs below M/(2·TTL−M), about 5.3 % with the default M).
	DriftBound float64
	// MarginZero runs every node with SafetyMargin 0.
	MarginZero bool
	// MixedTTL forces LeaseTTLs of 1s and 3s, SameTTL 1s for every node;
	// otherwise a seed picks.
	MixedTTL, SameTTL bool
	// Exclude names fault kinds this run never injects ("purge",
	// "forged-release", ...: see faultNames).
	Exclude []string
	// Knobs turn off rules of every node's machine, or try fixes under
	// evaluation: the negative controls (election.Knobs).
	Knobs election.Knobs
	// StrictLimits counts the protocol's stated limits as violations too:
	// an epoch that does not grow where nothing left knew the earlier one
	// (world.forgotten), and tenures that overlap where nothing left knew
	// the earlier holder's longer LeaseTTL (world.ttlForgotten).
	StrictLimits bool
	// ClockBack lets the server that creates the bucket again read a time
	// before the previous creation: past what §5.4 assumes of the servers'
	// clocks, a negative control for rule 50.
	ClockBack bool
	// TraceNode adds every event and effect of this node to the trace.
	TraceNode string
	// FaultPhase and QuietPhase are how long faults are injected, and how
	// long the run goes on without them (20s and 10s when zero).
	FaultPhase, QuietPhase time.Duration
	// Next runs the next machine (internal/election/v2) instead, judged
	// with StrictLimits: it states no limit to excuse. Forged records are
	// out of its threat model (docs/design-next.md §3) and not injected.
	Next bool
	// NextKnobs remove invariants of the next machine: its negative
	// controls.
	NextKnobs next.Knobs
}

// Outcome is what one seed's run found.
type Outcome struct {
	Seed       uint64
	Violations []string
	Trace      []string // the last lines of the run's trace
	Tenures    int
	Events     int
	// Forgotten counts tenures whose epoch did not grow where nothing
	// left knew the earlier one: the protocol's stated limit, excused.
	Forgotten int
	// BlindOverlaps counts overlaps beside a longer LeaseTTL nothing left
	// knew (docs/design.md §5.6): the stated limit, excused.
	BlindOverlaps int
	Faults        int           // faults injected
	Simulated     time.Duration // simulated real time the run covered
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
	if opt.Next {
		w.factory = nextMachines(w)
	}
	w.trace = tr
	w.schedule()
	w.loop(w.quietAt + w.opt.QuietPhase)
	// Hooks slower than the quiet phase push the liveness bound out
	// (checker.quiet): run on until it can be judged.
	// So do landings covered with a floor (checker.livenessEnd), which
	// may be written while it runs on.
	for end := w.chk.judgedBy(w.quietAt, maxTTL(w)); end > w.now; end = w.chk.judgedBy(w.quietAt, maxTTL(w)) {
		w.loop(end)
	}
	v := w.chk.finish(w.now, w.quietAt, maxTTL(w))
	return Outcome{Seed: seed, Violations: v, Tenures: len(w.chk.tenures), Events: w.events, Forgotten: w.chk.excused, BlindOverlaps: w.chk.blindOverlaps,
		Faults: w.faults, Simulated: w.now}, w.chk.first
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
	slowNet bool           // some network delays are long
	epochs  map[int64]bool // every epoch a node's record carried
	// servers draws the clocks of the servers that create the bucket:
	// a stream of its own, so that the faults' schedule is the same with
	// or without it.
	servers *rand.Rand
	// purges draws the raw purges (rawpurge.go), a stream of its own for
	// the same reason: the seeds recorded before them replay as they did
	// where the seed injects none.
	purges   *rand.Rand
	rawPurge bool // this seed purges the key from the stream by subject
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
		kv: newKV(0), chk: newChecker(), epochs: map[int64]bool{}}
	if opt.Next {
		opt.StrictLimits = true
		opt.Exclude = append(opt.Exclude[:len(opt.Exclude):len(opt.Exclude)], faultNames[fForged])
		w.opt = opt
	}
	w.quietAt = opt.FaultPhase
	w.makeProcs()
	// The bucket's TTL metadata (I2 of the next machine; the machine of
	// today does not read it): the first node's LeaseTTL, kept across
	// the bucket's incarnations.
	w.kv.ttl, w.kv.maxTTL = w.ttls[0], w.ttls[0]
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

// forgotten says nothing left knows epoch (led with a record at revision
// rev of the bucket with identity inc and epoch base bucketBase) when
// leader's tenure begins: no node that runs, and has been connected (not
// paused) for its LeaseTTL, had seen it when the leader's record was
// stored; the lease key's kept history before that record does not hold
// it; and the floors cannot stand for it: it was led in the bucket there
// is now, above its record's revision counted from the bucket's base (an
// epoch learned from a forged record above the revisions). A new tenure
// at or below it is then the protocol's stated limit (docs/design.md
// §5.5), not a violation. A bucket created again is no excuse (rule 50):
// its base is above every epoch of the one before, as §5.4 assumes of the
// servers' clocks.
func (w *world) forgotten(leader *proc, epoch int64, inc, rev uint64, bucketBase int64) bool {
	if w.stillKnown(leader, func(k known) bool { return k.epoch >= epoch },
		func(v []byte) bool { return recordEpoch(v) >= epoch }) {
		return false
	}
	return inc == w.kv.inc && bucketBase+int64(rev) < epoch
}

// ttlForgotten says nothing left knew a LeaseTTL of ttl when leader's
// tenure begins beside a live holder of that TTL: not the leader itself;
// no node that runs and has been connected for its LeaseTTL (one that
// had would have written a floor record carrying it, §5.3); and no
// record in the key's kept history before the leader's own. The leader
// then waited only the TTLs it knew, and an overlap with that holder is
// the protocol's stated limit (docs/design.md §5.6: a node started after
// the long-TTL record left the history, no floor carrying it), not a
// violation.
func (w *world) ttlForgotten(leader *proc, ttl time.Duration) bool {
	shown := func(k known) bool { return k.ttl >= ttl }
	return !shown(leader.knowsAt(leader.wroteWhen)) &&
		!w.stillKnown(leader, shown, func(v []byte) bool { return recordTTL(v) >= ttl })
}

// stillKnown says something left knew a fact when leader's record was
// stored: a node that runs and has settled (proc.settledAt) had been
// shown it, or a record kept in the key's history before the leader's
// carries it.
func (w *world) stillKnown(leader *proc, shown func(known) bool, carries func(value []byte) bool) bool {
	for _, p := range w.procs {
		if p.settledAt(leader.wroteWhen) && shown(p.knowsAt(leader.wroteWhen)) {
			return true
		}
	}
	for _, e := range w.kv.entries {
		if e.Op == election.Put && e.Rev < leader.wroteAt && carries(e.Value) {
			return true
		}
	}
	return false
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
