package sim

import (
	"fmt"
	"sort"
	"time"
)

// checker watches a run in simulated real time.
type checker struct {
	tenures    []*tenure
	live       map[*proc]*tenure
	violations []string
	stepDowns  map[uint64]time.Duration // token -> when StepDown was called
	handovers  []handover               // StepDowns that released
	loseBegan  map[*proc]time.Duration  // when the node's last OnLoseLeadership began
	// hooksDone: when every hook queued before faults stopped had returned
	// (set at quiet). A step-down's release waits for the hooks ahead of
	// its OnLoseLeadership (docs/design.md §4.4, P11): a slow hook is a
	// fault, and it may outlast the fault phase.
	hooksDone time.Duration
	lastHook  map[*proc]string
	resumes   map[*proc]resume // the last pause a node must have seen (preempt.go)
	first     time.Duration    // when the first violation happened
}

// tenure is one node's tenure: from its Become until its Lose or its
// deadline, whichever is first.
type tenure struct {
	node     string
	epoch    int64
	start    time.Duration
	lostAt   time.Duration // -1 while not lost
	deadline time.Duration // the deadline, in simulated time, as last seen
}

func (t *tenure) end() time.Duration {
	if t.lostAt >= 0 {
		return min(t.lostAt, t.deadline)
	}
	return t.deadline
}

func newChecker() *checker {
	return &checker{live: map[*proc]*tenure{}, stepDowns: map[uint64]time.Duration{}, lastHook: map[*proc]string{},
		loseBegan: map[*proc]time.Duration{}, resumes: map[*proc]resume{}}
}

func (c *checker) violate(now time.Duration, format string, args ...any) {
	if len(c.violations) == 0 || now < c.first {
		c.first = now
	}
	if len(c.violations) < 10 {
		c.violations = append(c.violations, fmt.Sprintf("at %.3fs: ", now.Seconds())+fmt.Sprintf(format, args...))
	}
}

func (c *checker) procStarted(p *proc) { c.lastHook[p] = "" }

// procEnded: a crashed process leads no more than its deadline allows.
func (c *checker) procEnded(p *proc) { delete(c.live, p); delete(c.resumes, p) }

func (c *checker) become(p *proc, epoch int64) {
	now := p.w.now
	if c.lastHook[p] == "become" {
		c.violate(now, "%s: OnBecomeLeader twice without OnLoseLeadership", p.cfg.NodeID)
	}
	c.lastHook[p] = "become"
	t := &tenure{node: p.cfg.NodeID, epoch: epoch, start: now, lostAt: -1, deadline: 1 << 62}
	c.tenures = append(c.tenures, t)
	c.live[p] = t
}

func (c *checker) lose(p *proc, epoch int64) {
	now := p.w.now
	if c.lastHook[p] != "become" {
		c.violate(now, "%s: OnLoseLeadership without OnBecomeLeader", p.cfg.NodeID)
	}
	c.lastHook[p] = "lose"
	t := c.live[p]
	if t == nil || t.epoch != epoch {
		c.violate(now, "%s: Lose of epoch %d, which is not its tenure", p.cfg.NodeID, epoch)
		return
	}
	t.lostAt = now
	delete(c.live, p)
}

// deadline records the live tenure's deadline after the logic handled an
// event: only a handled event can move it.
func (c *checker) deadline(p *proc) {
	t := c.live[p]
	if t == nil {
		return
	}
	if d, ok := deadline(p.logic); ok {
		t.deadline = p.real(d)
	} else {
		t.deadline = min(t.deadline, p.w.now)
	}
}

func (c *checker) permanent(p *proc, err error) {
	c.violate(p.w.now, "%s: permanent error in a run that should have none: %v", p.cfg.NodeID, err)
}

func (c *checker) stepDownCalled(token uint64, now time.Duration) { c.stepDowns[token] = now }

// reply: the call with token was answered, with success when ok.
func (c *checker) reply(p *proc, token uint64, ok bool) {
	if at, called := c.stepDowns[token]; called && ok {
		// The drain waits for OnLoseLeadership to begin, behind any hook
		// queued before it (§4.4): the handover is timed from then.
		c.handovers = append(c.handovers, handover{called: at, loseBegan: max(at, c.loseBegan[p])})
	}
}

// drained records a step-down or Stop of any origin (a call, a request
// over NATS, a failing check) at at, whose OnLoseLeadership began at
// began: its drain releases only once the hook has begun, behind any
// slow hook queued before it (§4.4), so a new tenure is due from then.
func (c *checker) drained(at, began time.Duration) {
	c.handovers = append(c.handovers, handover{called: at, loseBegan: max(at, began)})
}

// handover is a StepDown that released: when it was called, and when its
// OnLoseLeadership began.
type handover struct{ called, loseBegan time.Duration }

// loseHookBegins records when p's OnLoseLeadership begins.
func (c *checker) loseHookBegins(p *proc, at time.Duration) { c.loseBegan[p] = at }

// quiet records, as faults stop, when the hooks queued so far will have
// returned.
func (c *checker) quiet(procs []*proc, now time.Duration) {
	c.hooksDone = now
	for _, p := range procs {
		c.hooksDone = max(c.hooksDone, p.hooksFree)
	}
}

// finish checks the whole run, ended at now with faults stopped at quietAt.
func (c *checker) finish(now, quietAt, maxTTL time.Duration) []string {
	for _, t := range c.tenures {
		t.deadline = min(t.deadline, now)
	}
	ts := append([]*tenure(nil), c.tenures...)
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].start < ts[j].start })
	c.checkOverlap(ts)
	c.checkEpochs(ts)
	c.checkLiveness(ts, quietAt, maxTTL)
	return c.violations
}

// checkOverlap: no two tenures that were live overlap. None is excused:
// the protocol states no limit to excuse (docs/design.md).
func (c *checker) checkOverlap(ts []*tenure) {
	for i, a := range ts {
		if a.end() <= a.start {
			continue
		}
		for _, b := range ts[i+1:] {
			if b.start >= a.end() {
				break
			}
			if b.end() > b.start {
				c.violate(b.start, "tenures overlap: %s epoch %d [%.6fs, %.6fs] and %s epoch %d [%.6fs, %.6fs]",
					a.node, a.epoch, a.start.Seconds(), a.end().Seconds(), b.node, b.epoch, b.start.Seconds(), b.end().Seconds())
			}
		}
	}
}

// checkEpochs: the epochs of tenures that were live strictly increase in
// the order the tenures began (I1). A tenure whose Become comes after its
// own deadline (an acquire answered after it could lead: Become and Lose
// at once, with a cancelled ctx) was never live, and is left out.
func (c *checker) checkEpochs(ts []*tenure) {
	var prev *tenure
	for _, t := range ts {
		if t.end() <= t.start {
			continue
		}
		if prev != nil && t.epoch <= prev.epoch {
			c.violate(t.start, "epoch did not grow: %s epoch %d after %s epoch %d",
				t.node, t.epoch, prev.node, prev.epoch)
		}
		prev = t
	}
}

// checkLiveness: a leader exists within twice the longest TTL and a
// second after faults stop and the hooks queued until then have returned
// (a value waited out, round trips; a step-down draining behind a slow
// hook releases only once its OnLoseLeadership has begun, §4.4), and
// every StepDown that released in the quiet phase is followed by a new
// tenure within handoverBound of its OnLoseLeadership's start.
func (c *checker) checkLiveness(ts []*tenure, quietAt, maxTTL time.Duration) {
	bound, from := livenessBound(maxTTL), c.livenessFrom(quietAt)
	if end := c.livenessEnd(quietAt, maxTTL); !leaderWithin(ts, from, end) {
		c.violate(end, "no leader within %v after faults stopped and their hooks returned (%.3fs)", bound, from.Seconds())
	}
	for _, h := range c.handovers {
		if h.called < quietAt {
			continue
		}
		if !startsWithin(ts, h.called, h.loseBegan+handoverBound) {
			c.violate(h.loseBegan+handoverBound, "StepDown at %.3fs: no new tenure within %v of its OnLoseLeadership (%.3fs)",
				h.called.Seconds(), handoverBound, h.loseBegan.Seconds())
		}
	}
}

// livenessBound is how soon after livenessFrom a leader must exist: two
// waits of the ceiling (a value the faults left behind, then the one
// found after it: a raw purge leaves a marker believed that is gone, so
// the takeover over it conflicts), two RequestTimeouts (a node's is
// TTL/4: a resync, and a Create whose answer the network lost), and a
// second of round trips. Seed 934661 of the million at eaa6ac7 needed
// the two RequestTimeouts: its Create landed at 6.6 s, its answer lost.
func livenessBound(maxTTL time.Duration) time.Duration {
	return 2*maxTTL + 2*(maxTTL/4) + time.Second
}

// livenessEnd is when a leader must exist by: livenessBound after
// livenessFrom, or later where a step-down in the quiet phase before
// then drains behind a slow hook (§4.4): the leader it ends is due within
// handoverBound of its hook's start.
func (c *checker) livenessEnd(quietAt, maxTTL time.Duration) time.Duration {
	end := c.livenessFrom(quietAt) + livenessBound(maxTTL)
	for _, h := range c.handovers {
		if h.called >= quietAt && h.called < end {
			end = max(end, h.loseBegan+handoverBound)
		}
	}
	return end
}

// livenessFrom is when faults had stopped and the hooks queued until then
// had returned.
func (c *checker) livenessFrom(quietAt time.Duration) time.Duration { return max(quietAt, c.hooksDone) }

// judgedBy is when every liveness bound has run out: the run goes on
// until then.
func (c *checker) judgedBy(quietAt, maxTTL time.Duration) time.Duration {
	end := c.livenessEnd(quietAt, maxTTL)
	for _, h := range c.handovers {
		if h.called >= quietAt {
			end = max(end, h.loseBegan+handoverBound)
		}
	}
	return end
}

// handoverBound, from OnLoseLeadership's start: the drain (DrainTimeout,
// the TTL by default; a slow hook runs 2·TTL), the handover window and a
// few round trips.
const handoverBound = 8 * time.Second

func leaderWithin(ts []*tenure, from, to time.Duration) bool {
	for _, t := range ts {
		if t.start < to && t.end() > from && t.end() > t.start {
			return true
		}
	}
	return false
}

func startsWithin(ts []*tenure, from, to time.Duration) bool {
	for _, t := range ts {
		if t.start > from && t.start <= to {
			return true
		}
	}
	return false
}
