package sim

import (
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// schedule plans the run: nodes start, faults come at random during the
// fault phase, and at quietAt every fault stops.
func (w *world) schedule() {
	for _, p := range w.procs {
		w.at(w.dur(0, 500*time.Millisecond), p.start)
	}
	kinds := w.faultMix()
	for t := w.dur(0, time.Second); t < w.quietAt; t += w.dur(10*time.Millisecond, 1200*time.Millisecond) {
		k := kinds[w.rnd.IntN(len(kinds))]
		w.at(t, func() { w.fault(k) })
	}
	w.scheduleRawPurges()
	w.scheduleOutOfRange()
	w.scheduleTTLChanges()
	w.scheduleUpgrade()
	w.at(w.quietAt, w.quiet)
	for t := w.quietAt + 3*maxTTL(w); t < w.quietAt+w.opt.QuietPhase-3*maxTTL(w); t += 3 * maxTTL(w) {
		w.at(t, w.apiStepDown)
	}
}

func maxTTL(w *world) time.Duration {
	m := time.Duration(0)
	for _, t := range w.ttls {
		m = max(m, t)
	}
	return m
}

type faultKind int

const (
	fPartition faultKind = iota
	fCrash
	fPause
	fGarbage
	fForged // drawn, never injected (faultMix)
	fDelete
	fPurge
	fCompact
	fRecreate
	fBucketDelete
	fWatchClose
	fStepDown
	fStop
	fSlow
	nFaults
)

var faultNames = [...]string{"partition", "crash", "pause", "garbage", "forged", "delete", "purge", "compact",
	"recreate", "bucket-delete", "watch-close", "stepdown", "stop", "slow"}

// faultMix picks the kinds of fault this seed injects: partitions always,
// and each other kind with probability 1/2. Forged well-formed records
// are out of the threat model (docs/design.md §5) and never
// injected; their draw is kept, so that every seed keeps the schedule it
// had when they were.
func (w *world) faultMix() []faultKind {
	kinds := []faultKind{fPartition, fPartition}
	for k := fCrash; k < nFaults; k++ {
		if w.rnd.IntN(2) == 0 && k != fForged && !w.excluded(faultNames[k]) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

func (w *world) excluded(name string) bool { return w.opt.excluded(name) }

func (w *world) anyProc() *proc { return w.procs[w.rnd.IntN(len(w.procs))] }

// fault injects one fault of kind k.
func (w *world) fault(k faultKind) {
	w.faults++
	switch k {
	case fPartition:
		w.partition(w.anyProc(), w.dur(50*time.Millisecond, 2*maxTTL(w)))
	case fCrash:
		p := w.anyProc()
		p.crash("CRASH")
		w.at(w.now+w.dur(10*time.Millisecond, 2*maxTTL(w)), p.restart)
	case fPause:
		w.pause(w.anyProc(), w.dur(10*time.Millisecond, 2*maxTTL(w)))
	case fGarbage, fDelete, fPurge, fCompact, fRecreate, fBucketDelete:
		w.outOfBand(k)
	case fWatchClose:
		if p := w.anyProc(); p.up && p.watch != nil {
			w.logf("%s: watch closed", p.cfg.NodeID)
			p.watch = nil
			p.deliver(election.WatchClosed{})
		}
	case fStepDown:
		w.apiStepDown()
	case fStop:
		if p := w.anyProc(); p.up {
			w.logf("%s: Stop", p.cfg.NodeID)
			p.deliver(election.Stop{})
		}
	case fSlow:
		p := w.anyProc()
		p.slow = true
		w.at(w.now+w.dur(100*time.Millisecond, 2*time.Second), func() { p.slow = false })
	}
}

// partition cuts p off for d: requests and watch deliveries are lost.
func (w *world) partition(p *proc, d time.Duration) {
	if !p.connected {
		return
	}
	w.logf("%s: PARTITION for %v", p.cfg.NodeID, d.Round(time.Millisecond))
	p.connected = false
	p.partGen++
	p.deliver(election.Conn{Connected: false, Reconnects: p.reconnects})
	w.at(min(w.now+d, w.quietAt), func() { w.heal(p) })
}

func (w *world) heal(p *proc) {
	if p.connected {
		return
	}
	w.logf("%s: heal", p.cfg.NodeID)
	p.connected = true
	p.reconnects++
	if p.up && p.needWatch {
		p.needWatch = false
		p.openWatch(w.kv)
	}
	p.deliver(election.Conn{Connected: true, Reconnects: p.reconnects})
	if p.watch != nil {
		p.watch.schedule()
	}
}

// pause stops p's process for d (SIGSTOP): its clock runs on, it
// handles nothing until it resumes.
func (w *world) pause(p *proc, d time.Duration) {
	if !p.up || p.paused {
		return
	}
	w.logf("%s: PAUSE for %v", p.cfg.NodeID, d.Round(time.Millisecond))
	p.paused, p.pausedAt = true, w.now
	gen := p.gen
	w.at(min(w.now+d, w.quietAt), func() {
		if p.gen == gen {
			p.resume()
		}
	})
}

// outOfBand changes the key or the bucket as an operator or a bug would.
// Keys of a deleted bucket cannot be changed.
func (w *world) outOfBand(k faultKind) {
	if w.kv.deleted && k != fRecreate {
		return
	}
	switch k {
	case fGarbage:
		w.kv.append(election.Put, []byte(`{"garbage":`))
	case fDelete:
		w.kv.append(election.Delete, nil)
	case fPurge:
		w.kv.append(election.Purge, nil)
	case fCompact:
		w.kv.append(election.Purge, nil)
		w.at(w.now+w.dur(0, 500*time.Millisecond), w.kv.compact)
	case fRecreate:
		w.createBucket(nil)
	case fBucketDelete:
		w.deleteBucket(w.dur(0, 4*time.Second))
	}
	w.logf("OUT OF BAND: %s (seq %d)", faultNames[k], w.kv.seq)
	w.entryAdded()
}

// deleteBucket deletes the bucket, and creates it again after d (if no
// node's Start has created it first). A node waits for its bucket for as
// long as it runs, so d has no bound to stay under.
func (w *world) deleteBucket(d time.Duration) {
	w.incarnationEnds()
	w.kv.remove()
	w.logf("OUT OF BAND: bucket deleted for %v", d.Round(time.Millisecond))
	w.at(min(w.now+d, w.quietAt), func() {
		if w.kv.deleted {
			w.createBucket(nil)
		}
	})
}

// createBucket creates the bucket (again): a new stream, with a new
// creation time, made by creator (nil: an operator), and in seeds with
// creator-ttl with the creator's TTL. NATS announces it to the nodes connected now (the
// stream-created advisory); the machine reads none, as the driver does
// not subscribe to it (a watch closing or a Confirm finds a new bucket),
// but its network delays are still drawn, so that every seed keeps the
// schedule it had when it was delivered.
func (w *world) createBucket(creator *proc) {
	w.incarnationEnds()
	clock := w.creationClock()
	w.kv.recreate(w.now, clock, !w.opt.NoFirstSeq)
	if ttl, ok := w.creatorTTL(creator); ok {
		w.kv.ttl, w.kv.maxTTL = ttl, ttl
		w.logf("the bucket's lease_ttl and lease_ttl_max: its creator's %v", ttl)
	}
	w.logf("bucket created (identity %d, at %s on its server's clock)", w.kv.inc, clock.Format("15:04:05.000000"))
	for _, p := range w.procs {
		if p.up && p.connected {
			_ = w.delay(p)
		}
	}
}

// apiStepDown calls StepDown on the node that leads, naming a successor
// half the time.
func (w *world) apiStepDown() {
	for _, p := range w.procs {
		if !p.up || p.paused {
			continue
		}
		if _, ok := deadline(p.logic); !ok {
			continue
		}
		to := ""
		if q := w.anyProc(); q != p && w.rnd.IntN(2) == 0 {
			to = q.cfg.NodeID
		}
		w.tokens++
		w.logf("%s: StepDown(to=%q)", p.cfg.NodeID, to)
		w.chk.stepDownCalled(w.tokens, w.now)
		p.deliver(election.StepDown{To: to, Token: w.tokens})
		return
	}
}

// quiet ends every fault: all nodes connected, running and up.
func (w *world) quiet() {
	w.logf("QUIET: faults stop")
	if w.kv.deleted {
		w.createBucket(nil)
	}
	for _, p := range w.procs {
		p.slow = false
		w.heal(p)
		if p.up {
			p.resume()
		} else {
			p.start()
		}
	}
	w.chk.quiet(w.procs, w.now)
}

// creationClock is what the clock of the server creating the bucket now
// reads. The servers' clocks disagree: it reads the previous creation's
// time plus between a tenth and one and a half times the real time since
// (behind or ahead), which keeps the server clock assumption of
// docs/design.md §3.6 (it reads later than the previous creation by
// more than one microsecond for every write in between; a write here
// takes at least a round trip of 200 µs). Options.ClockBack breaks it:
// the clock reads up to a minute before the previous creation.
func (w *world) creationClock() time.Time {
	since := w.now - w.kv.created
	if w.opt.ClockBack {
		return w.kv.createdAt.Add(-time.Duration(w.servers.Int64N(int64(time.Minute))))
	}
	return w.kv.createdAt.Add(time.Duration(float64(since) * (0.1 + 1.4*w.servers.Float64())))
}
