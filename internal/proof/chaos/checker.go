package chaos

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Tenure is one node's leadership as its application saw it: from the call
// of OnBecomeLeader until the tenure ctx was cancelled (as first noticed by
// context.AfterFunc or OnLoseLeadership, whichever came first).
type Tenure struct {
	Instance string    // the Node: "<NodeID>#<generation>"
	Start    time.Time // OnBecomeLeader called
	End      time.Time // ctx cancelled; zero while live
	Epoch    int64     // from Node.Epoch or ValidateLeadership while ctx was live; 0 if never known
	// Stillborn: the ctx was already cancelled when OnBecomeLeader ran (its
	// hooks were stalled past the end of the tenure). Its interval is not
	// known and is left out of the overlap check.
	Stillborn bool

	ctx context.Context
}

// live reports whether the tenure's ctx is still live.
func (t *Tenure) live() bool { return t.ctx.Err() == nil }

// Checker records every tenure and hook of every node in one process, so
// that the invariants of docs/design.md §8 can be checked on one clock. Its
// methods are safe for concurrent use.
type Checker struct {
	mu      sync.Mutex
	tenures []*Tenure
	events  map[string][]string // per instance: "become" / "lose"
	viol    []string
}

// NewChecker returns an empty Checker.
func NewChecker() *Checker { return &Checker{events: map[string][]string{}} }

// Become records OnBecomeLeader(ctx) of instance and returns its tenure.
func (c *Checker) Become(instance string, ctx context.Context) *Tenure {
	now := time.Now()
	t := &Tenure{Instance: instance, Start: now, ctx: ctx}
	c.mu.Lock()
	if ctx.Err() != nil {
		t.Stillborn, t.End = true, now
	}
	c.tenures = append(c.tenures, t)
	c.events[instance] = append(c.events[instance], "become")
	c.mu.Unlock()
	context.AfterFunc(ctx, func() { c.ended(t) })
	return t
}

// ended records the end of t, once.
func (c *Checker) ended(t *Tenure) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.End.IsZero() {
		t.End = now
	}
}

// Lose records OnLoseLeadership of instance. The tenure ctx is cancelled
// before the hook runs, so this also bounds the end of its last tenure.
func (c *Checker) Lose(instance string) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events[instance] = append(c.events[instance], "lose")
	for i := len(c.tenures) - 1; i >= 0; i-- {
		if t := c.tenures[i]; t.Instance == instance {
			if t.End.IsZero() && !t.live() {
				t.End = now
			}
			break
		}
	}
}

// Proven records that ValidateLeadership returned epoch during t, checked
// to be still live afterwards. A tenure keeps one epoch.
func (c *Checker) Proven(t *Tenure, epoch int64) { c.setEpoch(t, epoch, "ValidateLeadership") }

// Claimed records the epoch the Node reported (Node.Epoch) while t was live,
// read in OnBecomeLeader: it gives an epoch to tenures that end before
// ValidateLeadership can prove one, a wrapped epoch included. It must agree
// with the proven one.
func (c *Checker) Claimed(t *Tenure, epoch int64) {
	if epoch != 0 {
		c.setEpoch(t, epoch, "Node.Epoch")
	}
}

func (c *Checker) setEpoch(t *Tenure, epoch int64, source string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case t.Epoch == 0:
		t.Epoch = epoch
	case t.Epoch != epoch:
		c.viol = append(c.viol, fmt.Sprintf("%s: epoch changed within one tenure: %d then %d (%s)", t.Instance, t.Epoch, epoch, source))
	}
}

// Violation records a violation found outside the Checker (by a writer).
func (c *Checker) Violation(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.viol = append(c.viol, fmt.Sprintf(format, args...))
}

// Tenures returns a copy of the tenures recorded so far, by start time.
func (c *Checker) Tenures() []Tenure {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Tenure, len(c.tenures))
	for i, t := range c.tenures {
		out[i] = *t
		out[i].ctx = nil
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// Check returns every violation: those recorded so far, overlapping
// tenures, epochs that did not strictly increase or wrapped, and hooks out
// of order.
// With final set, every node must have stopped: a tenure still live or a
// Become without its Lose is a violation too.
func (c *Checker) Check(final bool) []string {
	ts := c.Tenures()
	c.mu.Lock()
	out := append([]string(nil), c.viol...)
	events := make(map[string][]string, len(c.events))
	for k, v := range c.events {
		events[k] = append([]string(nil), v...)
	}
	c.mu.Unlock()

	out = append(out, checkOverlap(ts, final)...)
	out = append(out, checkEpochs(ts)...)
	out = append(out, checkAlternation(events, final)...)
	return out
}

// checkOverlap: sorted by start, no tenure may start before every earlier
// one has ended.
func checkOverlap(ts []Tenure, final bool) []string {
	var out []string
	var last *Tenure // the earlier tenure that ends last
	for i := range ts {
		t := &ts[i]
		if t.Stillborn {
			continue
		}
		if final && t.End.IsZero() {
			out = append(out, fmt.Sprintf("%s (epoch %d) still live after every node stopped", t.Instance, t.Epoch))
		}
		if last != nil && (last.End.IsZero() || t.Start.Before(last.End)) {
			out = append(out, fmt.Sprintf("tenures overlap: %s (epoch %d) started at %s while %s (epoch %d) led until %s",
				t.Instance, t.Epoch, t.Start.Format("15:04:05.000"), last.Instance, last.Epoch, endString(last.End)))
		}
		if last == nil || (!last.End.IsZero() && (t.End.IsZero() || t.End.After(last.End))) {
			last = t
		}
	}
	return out
}

func endString(t time.Time) string {
	if t.IsZero() {
		return "(still live)"
	}
	return t.Format("15:04:05.000")
}

// checkEpochs: in start order, every epoch handed out is positive and
// above every epoch handed out before it, by any node, in any generation
// of the bucket (a recreated bucket or a compacted key must not restart the
// epoch). A negative epoch is one that wrapped past math.MaxInt64. Each
// tenure is compared with the highest epoch before it, not only with its
// predecessor, so that 5, 9, 7 reports 7 even though 7 > 5.
func checkEpochs(ts []Tenure) []string {
	var out []string
	var top *Tenure // the tenure with the highest epoch so far
	for i := range ts {
		t := &ts[i]
		switch {
		case t.Epoch == 0:
			continue // not known: stillborn, or ended before it was read
		case t.Epoch < 0:
			out = append(out, fmt.Sprintf("epoch wrapped: %s led from %s with negative epoch %d",
				t.Instance, t.Start.Format("15:04:05.000"), t.Epoch))
			continue
		case top != nil && t.Epoch <= top.Epoch:
			out = append(out, fmt.Sprintf("epoch did not increase (regression): %s led from %s with epoch %d, not above epoch %d of %s (from %s)",
				t.Instance, t.Start.Format("15:04:05.000"), t.Epoch, top.Epoch, top.Instance, top.Start.Format("15:04:05.000")))
			continue
		}
		top = t
	}
	return out
}

// checkAlternation: each Node's hooks go become, lose, become, lose...
func checkAlternation(events map[string][]string, final bool) []string {
	var out []string
	names := make([]string, 0, len(events))
	for k := range events {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, inst := range names {
		evs := events[inst]
		for i, e := range evs {
			want := "become"
			if i%2 == 1 {
				want = "lose"
			}
			if e != want {
				out = append(out, fmt.Sprintf("%s: hooks out of order: %v", inst, evs))
				break
			}
		}
		if final && len(evs)%2 == 1 {
			out = append(out, fmt.Sprintf("%s: OnBecomeLeader without OnLoseLeadership after Stop", inst))
		}
	}
	return out
}
