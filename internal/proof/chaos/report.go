package chaos

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// Report is the outcome of a run.
type Report struct {
	Seed          uint64        // the schedule's seed: the same seed draws the same faults
	Nodes         int           // nodes in the run
	LeaseTTL      time.Duration // the cluster's LeaseTTL, in the bucket's metadata (nodes configured otherwise follow it: see NodeTTLs)
	RenewInterval time.Duration // the nodes' RenewInterval (the base)
	NodeTTLs      string        // each node's configured LeaseTTL/RenewInterval, when they differ
	MaxLeaseTTL   time.Duration // the longest TTL of the run: any node's LeaseTTL, and the bucket's during long-ttl-garbage
	Duration      time.Duration // time faults were injected
	Observed      time.Duration // time the sampler watched (faults, healing, steady state)

	Faults  map[FaultKind]int // injected, by kind
	Skipped map[FaultKind]int // drawn but not applicable at the time (no target, or out-of-band too soon)

	Tenures     int            // OnBecomeLeader calls: leadership transitions
	Stillborn   int            // tenures already over when OnBecomeLeader ran (stalled hooks)
	Unproven    int            // tenures that ended before their epoch was known
	FinalEpoch  int64          // highest epoch of a tenure
	Fence       FenceStats     // what the fenced resource accepted and refused
	State       StateStats     // the leaders' writes through Node.State() and the bucket stream's order (CheckState)
	ValidateErr map[string]int // ValidateLeadership failures during live tenures, by cause

	Availability float64       // share of sampled time in which some node led
	Gaps         []Gap         // leaderless stretches, longest first
	Recovery     time.Duration // from healing every fault to a leader (to RecoveryLimit if none came)
	Recovered    bool          // a leader came within RecoveryLimit of healing
	// RecoveryLimit is the longest Recovery allowed (Options.RecoveryLimit).
	RecoveryLimit time.Duration

	NodeFailures  []string  // Nodes that stopped on their own or could not start (library failures under transient faults)
	ExpectedStops []string  // Nodes that stopped with the permanent error an out-of-band fault calls for
	Violations    []string  // broken invariants: must be empty
	Liveness      []string  // liveness failures (no leader long after every fault healed): must be empty
	Log           []LogLine // one line per fault and heal

	start time.Time
}

// LogLine is one fault or heal, At after the faults began.
type LogLine struct {
	At   time.Duration // since the faults began
	Text string        // what happened
}

// String renders the line with its time.
func (l LogLine) String() string { return fmt.Sprintf("%9.3fs  %s", l.At.Seconds(), l.Text) }

// around returns the log lines from before-start to end of a gap.
func (r *Report) around(g Gap, before time.Duration) []LogLine {
	from, to := g.Start.Sub(r.start)-before, g.Start.Add(g.Duration).Sub(r.start)
	var out []LogLine
	for _, l := range r.Log {
		if l.At >= from && l.At <= to {
			out = append(out, l)
		}
	}
	return out
}

// LongestGap is the longest time without a leader, or 0.
func (r *Report) LongestGap() time.Duration {
	if len(r.Gaps) == 0 {
		return 0
	}
	return r.Gaps[0].Duration
}

// report builds the Report once every node has stopped.
func (r *run) report(faultsEnd, end time.Time, recovery time.Duration, recovered bool) *Report {
	ts := r.checker.Tenures()
	rep := &Report{
		Seed: r.opts.Seed, Nodes: r.opts.Nodes, LeaseTTL: r.opts.LeaseTTL, RenewInterval: r.opts.RenewInterval,
		MaxLeaseTTL: r.maxTTL, Duration: faultsEnd.Sub(r.start), Observed: end.Sub(r.start),
		Faults: r.faults, Skipped: r.skipped, Tenures: len(ts),
		Recovery: recovery, Recovered: recovered, RecoveryLimit: r.opts.RecoveryLimit,
		Fence: r.fence.Stats(), Log: r.log, start: r.start,
	}
	if r.opts.LongTTLNodes > 0 {
		rep.NodeTTLs = r.ttlSummary()
	}
	for _, t := range ts {
		if t.Stillborn {
			rep.Stillborn++
		} else if t.Epoch == 0 {
			rep.Unproven++
		}
		rep.FinalEpoch = max(rep.FinalEpoch, t.Epoch)
	}
	rep.Availability, rep.Gaps = r.samples.result()
	r.statsMu.Lock()
	rep.ValidateErr = r.validateErrs
	rep.NodeFailures = append([]string(nil), r.nodeFailures...)
	rep.ExpectedStops = append([]string(nil), r.expectedStops...)
	rep.Liveness = append([]string(nil), r.liveness...)
	r.statsMu.Unlock()
	rep.Violations = append(r.checker.Check(true), r.fence.Violations()...)
	if !r.order.finish(10 * time.Second) {
		r.logf("state: the order recorder did not catch up with the stream in 10s; the rest counts as not seen")
	}
	stats, viol := CheckState(StateHistory{Order: r.order.incarnations(), Writes: r.state.all(), Deletions: r.deletions, Tenures: ts})
	rep.State = stats
	rep.Violations = append(rep.Violations, viol...)
	return rep
}

// String renders the report for people.
func (r *Report) String() string {
	var b strings.Builder
	total := 0
	for _, n := range r.Faults {
		total += n
	}
	fmt.Fprintf(&b, "chaos report: seed %d, %d nodes, LeaseTTL %v, RenewInterval %v\n", r.Seed, r.Nodes, r.LeaseTTL, r.RenewInterval)
	if r.NodeTTLs != "" {
		fmt.Fprintf(&b, "  LeaseTTL/RenewInterval per node: %s\n", r.NodeTTLs)
	}
	fmt.Fprintf(&b, "  faults injected for %v (observed %v): %d\n", r.Duration.Round(time.Millisecond), r.Observed.Round(time.Millisecond), total)
	fmt.Fprintf(&b, "  faults by kind: %s\n", kindCounts(r.Faults))
	if len(r.Skipped) > 0 {
		fmt.Fprintf(&b, "  drawn but not applicable (no target, or out-of-band too soon): %s\n", kindCounts(r.Skipped))
	}
	fmt.Fprintf(&b, "  transitions (tenures): %d (stillborn %d, ended before their epoch was known %d), final epoch %d\n",
		r.Tenures, r.Stillborn, r.Unproven, r.FinalEpoch)
	fmt.Fprintf(&b, "  fence: %d writes accepted, %d refused (%d stale-leader writes replayed, all must be refused), highest epoch %d\n",
		r.Fence.Accepted, r.Fence.Refused, r.Fence.StaleWrites, r.Fence.Highest)
	st := r.State
	fmt.Fprintf(&b, "  state writes: %d acknowledged (Puts and the writes of %d Commits), refused %d (ErrFenced %d, ErrNotLeader %d), outcome unknown %d %s\n",
		st.Acked, st.Commits, st.Fenced+st.NotLeader, st.Fenced, st.NotLeader, sum(st.Unknown), causes(st.Unknown))
	for _, c := range slices.Sorted(maps.Keys(st.UnknownErr)) {
		fmt.Fprintf(&b, "    %s, e.g.: %s\n", c, st.UnknownErr[c])
	}
	fmt.Fprintf(&b, "  state order: %d state writes in %d stream(s), %d checked against the lease record before them, %d after a message not seen (%d messages not seen); acknowledged but gone: %d with a recreated bucket, %d not seen\n",
		st.InOrder, st.Streams, st.Checked, st.Unchecked, st.NotSeen, st.LostToRecreate, st.LostUnseen)
	if len(r.ValidateErr) > 0 {
		fmt.Fprintf(&b, "  ValidateLeadership failures in live tenures: %v\n", r.ValidateErr)
	}
	fmt.Fprintf(&b, "  availability: %.2f%% of the time some node led\n", 100*r.Availability)
	if g := r.LongestGap(); g > 0 {
		fmt.Fprintf(&b, "  longest leaderless gap: %v = %.2f x LeaseTTL (at +%v)\n", g.Round(time.Millisecond),
			float64(g)/float64(r.LeaseTTL), r.Gaps[0].Start.Sub(r.start).Round(time.Millisecond))
		for _, l := range r.around(r.Gaps[0], 2*r.LeaseTTL) {
			fmt.Fprintf(&b, "    %s\n", l)
		}
		fmt.Fprintf(&b, "  leaderless gaps: %s\n", gapHistogram(r.Gaps, r.LeaseTTL, r.RenewInterval))
	}
	if r.Recovered {
		fmt.Fprintf(&b, "  recovery after healing: %v (limit %v)\n", r.Recovery.Round(time.Millisecond), r.RecoveryLimit)
	} else {
		fmt.Fprintf(&b, "  recovery after healing: NONE, no leader within %v\n", r.Recovery.Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "  node failures (stopped on their own, or could not start): %d\n", len(r.NodeFailures))
	for _, f := range r.NodeFailures {
		fmt.Fprintf(&b, "    %s\n", f)
	}
	if len(r.ExpectedStops) > 0 {
		fmt.Fprintf(&b, "  expected stops (permanent errors called for by out-of-band faults): %d\n", len(r.ExpectedStops))
		for _, f := range r.ExpectedStops {
			fmt.Fprintf(&b, "    %s\n", f)
		}
	}
	fmt.Fprintf(&b, "  liveness failures: %d\n", len(r.Liveness))
	for _, l := range r.Liveness {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	fmt.Fprintf(&b, "  invariant violations: %d\n", len(r.Violations))
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "    %s\n", v)
	}
	return b.String()
}

func kindCounts(m map[FaultKind]int) string {
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s=%d", k, m[FaultKind(k)])
	}
	return strings.Join(parts, " ")
}

// gapHistogram buckets the gaps against what the protocol allows: a
// handover (well under LeaseTTL), a takeover after expiry (up to
// LeaseTTL + RenewInterval, plus NATS round trips), and longer.
func gapHistogram(gaps []Gap, ttl, renew time.Duration) string {
	var fast, expiry, long int
	for _, g := range gaps {
		switch {
		case g.Duration < ttl/2:
			fast++
		case g.Duration <= ttl+renew+ttl/2:
			expiry++
		default:
			long++
		}
	}
	return fmt.Sprintf("%d under LeaseTTL/2, %d up to LeaseTTL+RenewInterval+LeaseTTL/2, %d longer", fast, expiry, long)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// causes renders counts by cause, sorted: "(timeout=3 other=1)", or "".
func causes(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return "(" + strings.Join(parts, " ") + ")"
}
