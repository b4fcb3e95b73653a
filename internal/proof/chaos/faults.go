package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// FaultKind is one kind of fault the schedule injects.
type FaultKind string

// The faults a run can inject.
const (
	FaultCut        FaultKind = "cut"         // close a node's connections, refuse new ones, then restore
	FaultBlackhole  FaultKind = "blackhole"   // drop a node's traffic silently both ways, then restore
	FaultStall      FaultKind = "stall"       // hold a node's traffic back, then deliver it late
	FaultHookStall  FaultKind = "hook-stall"  // block a node's hooks for a while
	FaultStepDown   FaultKind = "stepdown"    // the leader calls StepDown
	FaultRestart    FaultKind = "restart"     // Stop a node gracefully, start a new Node with its ID later
	FaultCrash      FaultKind = "crash"       // close a node's connection with no release, start a new Node later
	FaultServer     FaultKind = "server"      // shut a NATS server down (maybe the stream leader), restart it later
	FaultGarbage    FaultKind = "garbage"     // write garbage, a marker or an out-of-range record into the lease key (garbage.go)
	FaultQuorumLoss FaultKind = "quorum-loss" // shut two of three servers down at once (off unless asked for)

	// FaultRoutePartition cuts or blackholes the routes between one server
	// (the stream leader or the meta leader, some of the time) and the
	// other two, then heals them: the servers stay up and the nodes keep
	// their connections, but that server is cut off from its replicas.
	FaultRoutePartition FaultKind = "route-partition"

	// FaultBucketRecreate deletes the bucket and creates it again as
	// go-cluster init --force would: a new stream, whose revisions restart
	// at 1, with the cluster's LeaseTTL and the old ceiling (outofband.go).
	FaultBucketRecreate FaultKind = "bucket-recreate"
	// FaultCompaction purges the lease key and then its purge marker: the
	// key is absent, as after a compaction.
	FaultCompaction FaultKind = "compaction"
	// FaultTTLGarbage raises the bucket's LeaseTTL 3 to 5 times, hands
	// over so that a tenure begins with it, lowers it back (the ceiling
	// stays), and writes garbage (or a marker) while that tenure leads,
	// its connection blackholed half of the time (longttl.go).
	FaultTTLGarbage FaultKind = "long-ttl-garbage"
)

// A record at epoch MaxInt64 is one of the garbage values: out of its
// incarnation's range, it is unknown (docs/design.md P1), and nodes go on
// electing above it. TestChaosOutOfRangeEpoch checks what follows it
// precisely.

// DefaultKinds are the faults a run injects unless Options.Kinds says
// otherwise; FaultQuorumLoss is left out.
var DefaultKinds = []FaultKind{
	FaultCut, FaultBlackhole, FaultStall, FaultHookStall, FaultStepDown,
	FaultRestart, FaultCrash, FaultServer, FaultRoutePartition, FaultGarbage,
	FaultBucketRecreate, FaultCompaction, FaultTTLGarbage,
}

// AllKinds are every FaultKind a run knows.
var AllKinds = append(append([]FaultKind(nil), DefaultKinds...), FaultQuorumLoss)

// ParseKinds parses a comma-separated list of fault kinds; "default" stands
// for DefaultKinds and "out-of-band" for the out-of-band ones among them.
func ParseKinds(list string) ([]FaultKind, error) {
	var out []FaultKind
	for _, f := range strings.Split(list, ",") {
		k := FaultKind(strings.TrimSpace(f))
		switch {
		case k == "":
		case k == "default":
			out = append(out, DefaultKinds...)
		case k == "out-of-band":
			for _, d := range DefaultKinds {
				if d.OutOfBand() {
					out = append(out, d)
				}
			}
		case k == "forged-max":
			return nil, fmt.Errorf("forged-max is now among the values of the garbage fault; TestChaosOutOfRangeEpoch checks it on its own")
		case slices.Contains(AllKinds, k):
			out = append(out, k)
		default:
			return nil, fmt.Errorf("unknown fault kind %q; known: %v, default, out-of-band", k, AllKinds)
		}
	}
	return out, nil
}

// heal is an action due at a time: the end of a fault.
type heal struct {
	at   time.Time
	what string
	fn   func()
}

// inject applies one fault of kind k and returns a description, or "" if it
// did not apply now (no eligible target, or an out-of-band fault too soon
// after the last one).
func (r *run) inject(k FaultKind) string {
	if !k.OutOfBand() {
		return r.injectInBand(k)
	}
	if !r.outOfBandDue() || r.quorumDown() {
		// Without a quorum its requests would only time out, holding up
		// the schedule and the heals due meanwhile.
		return ""
	}
	var what string
	switch k {
	case FaultGarbage:
		what = r.injectGarbage()
	case FaultBucketRecreate:
		what = r.injectRecreate()
	case FaultCompaction:
		what = r.injectCompaction()
	case FaultTTLGarbage:
		what = r.injectTTLGarbage()
	}
	if what != "" {
		r.lastOutOfBand = time.Now()
	}
	return what
}

// injectInBand applies a fault of the nodes' surroundings: links, hooks,
// processes and servers.
func (r *run) injectInBand(k FaultKind) string {
	switch k {
	case FaultCut, FaultBlackhole, FaultStall:
		return r.injectLink(k)
	case FaultHookStall:
		m := r.pickMember(true)
		if m == nil {
			return ""
		}
		d := r.span(0.5, 3)
		m.stall.close()
		r.busy[m]++
		r.later(d, "hooks of "+m.id+" resume", func() { m.stall.open(); r.busy[m]-- })
		return fmt.Sprintf("stall hooks of %s for %v", m.id, d)
	case FaultStepDown:
		for _, m := range r.members {
			if n := m.current(); n != nil && n.IsLeader() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := n.StepDown(ctx)
				cancel()
				return fmt.Sprintf("StepDown %s: %v", m.id, errString(err))
			}
		}
		return ""
	case FaultRestart, FaultCrash:
		return r.injectStop(k)
	case FaultServer:
		return r.injectServer()
	case FaultRoutePartition:
		return r.injectRoutePartition()
	case FaultQuorumLoss:
		return r.injectQuorumLoss()
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// injectLink cuts, blackholes or stalls one node's connections.
func (r *run) injectLink(k FaultKind) string {
	m := r.pickMember(true)
	if m == nil {
		return ""
	}
	d := r.span(0.2, 2.5)
	for _, p := range m.proxies {
		switch k {
		case FaultCut:
			p.Cut()
		case FaultBlackhole:
			p.Blackhole()
		case FaultStall:
			p.Stall()
		}
	}
	r.busy[m]++
	r.later(d, "restore "+m.id, func() { m.restore(); r.busy[m]-- })
	return fmt.Sprintf("%s %s%s for %v", k, m.id, r.leaderMark(m), d)
}

// injectStop restarts a node gracefully or crashes it, and starts a new
// Node under its ID later.
func (r *run) injectStop(k FaultKind) string {
	down := 0
	for _, m := range r.members {
		if m.current() == nil {
			down++
		}
	}
	if len(r.members)-down <= 2 { // keep at least two nodes running
		return ""
	}
	m := r.pickMember(true)
	if m == nil {
		return ""
	}
	mark := r.leaderMark(m)
	var err error
	if k == FaultCrash {
		err = m.crash()
	} else {
		err = m.stop()
	}
	if err != nil {
		r.t.Errorf("chaos: %s %s: %v", k, m.id, err)
	}
	d := r.span(0, 2)
	r.busy[m]++
	r.later(d, "start "+m.id, func() {
		r.busy[m]--
		if m.current() == nil {
			r.startAsync(m)
		}
	})
	return fmt.Sprintf("%s %s%s, back in %v", k, m.id, mark, d)
}

// injectServer shuts down one NATS server, the stream leader half of the
// time, while all are up and routed, and restarts it later.
func (r *run) injectServer() string {
	if r.routesCut || len(r.cluster.URLs()) < len(r.cluster.Servers()) {
		return "" // one is down or cut off already: never two at once
	}
	stream := "KV_" + r.bucket()
	i, what := r.rngIntN(len(r.cluster.Servers())), "server"
	if r.chance(0.5) {
		if l := r.cluster.StreamLeader("$G", stream); l >= 0 {
			i, what = l, "stream leader"
		}
	}
	r.cluster.Shutdown(i)
	d := r.span(0.5, 3)
	r.later(d, fmt.Sprintf("restart n%d", i), func() { r.cluster.Restart(r.t, i) })
	return fmt.Sprintf("shut down n%d (%s) for %v", i, what, d)
}

// injectQuorumLoss shuts down two servers at once: JetStream stops, no
// lease can be renewed or won, and the leader must stop at its deadline.
func (r *run) injectQuorumLoss() string {
	if r.routesCut || len(r.cluster.URLs()) < len(r.cluster.Servers()) {
		return ""
	}
	a := r.rngIntN(3)
	b := (a + 1 + r.rngIntN(2)) % 3
	r.cluster.Shutdown(a)
	r.cluster.Shutdown(b)
	r.quorumLosses = append(r.quorumLosses, outage{From: time.Now()})
	d := r.span(1, 3)
	r.later(d, fmt.Sprintf("restart n%d and n%d", a, b), func() {
		r.cluster.Restart(r.t, a)
		r.cluster.Restart(r.t, b)
		r.quorumLosses[len(r.quorumLosses)-1].To = time.Now()
	})
	return fmt.Sprintf("shut down n%d and n%d (quorum lost) for %v", a, b, d)
}

// outage is a stretch of time; To is zero while it lasts.
type outage struct{ From, To time.Time }

// quorumDown reports a quorum-loss fault not healed yet.
func (r *run) quorumDown() bool {
	n := len(r.quorumLosses)
	return n > 0 && r.quorumLosses[n-1].To.IsZero()
}

// startQuorumSlack is how long a Start needs, at least, once JetStream has
// its quorum back: the meta and stream leaders are elected again first.
const startQuorumSlack = 10 * time.Second

// quorumLostDuring reports whether a quorum-loss fault overlapped a Start
// from began to failed and left it less than startQuorumSlack with a
// quorum: a Start bounded by 20s cannot succeed then, and failing is what
// the library documents (its ctx bounds the startup).
func (r *run) quorumLostDuring(began, failed time.Time) bool {
	for _, o := range r.quorumLosses {
		if o.From.Before(failed) && (o.To.IsZero() || o.To.After(began)) && (o.To.IsZero() || failed.Sub(o.To) < startQuorumSlack) {
			return true
		}
	}
	return false
}
