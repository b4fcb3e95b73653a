package sim

// A rolling upgrade (docs/design.md §5.9, P16): the nodes are replaced
// one at a time by nodes that speak the next protocol version too, some
// stopped gracefully, some killed; before the cluster has moved, a
// replaced node may be put back (a rolling downgrade) and replaced again.
// Each node names the versions it speaks in its member record, which a
// Confirm reads. A stream of its own, so that every other draw of a seed
// stays as it was.

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

const upgradeName = "rolling-upgrade"

// member is a node's member record: the highest version it speaks, and
// when it was written.
type member struct {
	hi    int
	since time.Duration
}

// versions is what the world knows of protocol versions: the member
// records, the last time a member record named each highest version, and
// the version of the last lease record that landed.
type versions struct {
	members map[string]member
	named   map[int]time.Duration
	top     int
}

// hi is the highest version the running process speaks (its start's).
func (p *proc) hi() int { return cmp.Or(p.cfg.ProtocolHi, wire.ProtocolHi) }

// replaced applies, at a start, the version a replacement chose: the
// process that was running until then spoke its own to the end.
func (p *proc) replaced() {
	if p.nextHi != 0 {
		p.cfg.ProtocolHi, p.nextHi = p.nextHi, 0
	}
}

// announce writes p's member record, as Start does.
func (w *world) announce(p *proc) {
	w.noteMembers()
	w.versions.members[p.cfg.NodeID] = member{hi: p.hi(), since: w.now}
	w.noteMembers()
}

// withdraw deletes p's member record, as Stop does; a killed node's stays.
func (w *world) withdraw(p *proc) {
	w.noteMembers()
	delete(w.versions.members, p.cfg.NodeID)
}

// noteMembers notes that the member records name their versions now.
func (w *world) noteMembers() {
	for _, m := range w.versions.members {
		w.versions.named[m.hi] = w.now
	}
}

// membersSpeak is the highest version every member record names.
func (w *world) membersSpeak() int {
	speak := 0
	for _, m := range w.versions.members {
		if speak == 0 || m.hi < speak {
			speak = m.hi
		}
	}
	return speak
}

// scheduleUpgrade plans this seed's rolling upgrade, if it has one.
func (w *world) scheduleUpgrade() {
	r := rand.New(rand.NewPCG(w.seed, 0x9016))
	if r.IntN(2) != 0 || w.opt.excluded(upgradeName) {
		return
	}
	step := w.quietAt / time.Duration(len(w.procs)+1)
	for i, idx := range r.Perm(len(w.procs)) {
		p, at := w.procs[idx], step*time.Duration(i+1)+time.Duration(r.Int64N(int64(step/2)))
		kill := r.IntN(3) == 0
		w.at(at, func() { w.replace(p, wire.ProtocolHi+1, kill) })
		if r.IntN(4) == 0 { // put back while the cluster has not moved, then replaced again
			back := at + time.Duration(r.Int64N(int64(step/2)))
			w.at(back, func() {
				if w.versions.top <= wire.ProtocolHi {
					w.replace(p, wire.ProtocolHi, kill)
					w.at(w.now+step/4, func() { w.replace(p, wire.ProtocolHi+1, kill) })
				}
			})
		}
	}
}

// replace runs p's next start with the versions up to hi: now, after a
// Stop or a kill, or at its next start if it is down.
func (w *world) replace(p *proc, hi int, kill bool) {
	w.logf("%s: replaced by a node of protocol %d (killed %v)", p.cfg.NodeID, hi, kill)
	p.nextHi = hi
	switch {
	case !p.up:
	case kill:
		p.crash("KILLED for a new version")
		w.at(w.now+w.dur(10*time.Millisecond, 500*time.Millisecond), p.restart)
	default:
		p.deliver(election.Stop{})
	}
}

// landed checks a lease record that landed over the entry over, written
// by p (P16): never over a record of a version it does not speak. A
// writer reads the members at most two ceilings before: the cluster's
// version rises only to one that every member announced before then
// speaks, and falls only to one a member named since then.
func (w *world) landed(p *proc, over election.KVEntry, value []byte) {
	l, err := wire.DecodeLease(value, 0)
	if err != nil {
		return
	}
	if o, err := wire.DecodeLease(over.Value, 0); err == nil && over.Op == election.Put && o.Version > p.hi() {
		w.chk.violate(w.now, "%s, which speaks up to protocol %d, wrote over a record of protocol %d", p.cfg.NodeID, p.hi(), o.Version)
	}
	v, window := w.versions, 2*maxTTL(w)
	w.noteMembers()
	switch {
	case v.top == 0:
	case l.Version > v.top:
		for _, id := range slices.Sorted(maps.Keys(v.members)) {
			if m := v.members[id]; m.hi < l.Version && w.now-m.since > window {
				w.chk.violate(w.now, "%s moved the cluster to protocol %d while member %s, announced %v before, speaks up to %d",
					p.cfg.NodeID, l.Version, id, w.now-m.since, m.hi)
			}
		}
	case l.Version < v.top:
		lower := false
		for hi, at := range v.named {
			lower = lower || hi <= l.Version && w.now-at <= window
		}
		if !lower {
			w.chk.violate(w.now, "%s moved the cluster back from protocol %d to %d, which no member named for %v", p.cfg.NodeID, v.top, l.Version, window)
		}
	}
	w.versions.top = l.Version
}

// checkUpgraded: once every node speaks the next version, the cluster
// moves to it by the end of the run (the quiet phase is several
// ceilings long).
func (w *world) checkUpgraded() {
	for _, p := range w.procs {
		if p.hi() <= wire.ProtocolHi || p.nextHi != 0 && p.nextHi <= wire.ProtocolHi {
			return
		}
	}
	if w.versions.top <= wire.ProtocolHi {
		w.chk.violate(w.now, "every node speaks protocol %d, and the cluster is still at %d (member records: %v)", wire.ProtocolHi+1, w.versions.top, w.versions.members)
	}
}
