package cluster

// The follower's side of the election: judging expiry on this node's
// clock, and deciding when to campaign. The lease as seen is in observe.go,
// the writes that campaign in campaign.go.

import (
	"encoding/json"
	"time"
)

// observed is a lease entry as this node saw it.
type observed struct {
	present bool   // some entry exists (delete and purge markers count)
	rev     uint64 // its revision
	lease   Lease  // decoded record, when valid
	valid   bool   // decoded as a lease record (not garbage, not a marker)
	// handedBack says a released record releases what this node saw just
	// before it (a record at the same epoch), or is the first thing this
	// node sees: taken at once. A release out of the blue (an operator's,
	// a forger's) may have been written under a holder that is still
	// running, cut off: it waits the takeover wait like a held record.
	handedBack bool
	// firstSight marks a release that is the first thing this node saw:
	// the key's history tells whether it handed back the record before it
	// (confirmHandBack); until then it is not taken.
	firstSight bool
	firstSeen  time.Time
	expired    bool // unchanged for the takeover wait on this node's clock
}

func (o observed) released() bool { return o.valid && o.lease.NodeID == "" }

// takeoverWait is how long a lease must stay unchanged before this node
// takes it over: its own LeaseTTL, or the longest any record on the key
// has carried, whichever is longer. Garbage, markers and absent keys say
// nothing of their writer's TTL, so the memory is what keeps a node with a
// short TTL from overtaking a cut-off holder with a long one.
func (e *election) takeoverWait() time.Duration { return max(e.cfg.LeaseTTL, e.maxTTL) }

// holdUntil is when the lease as seen may be taken over; zero when it may
// be taken now. An absent key may have been compacted, or its bucket
// deleted and created again (even by this node, at Start), under a holder
// that is still running, cut off: it is waited out like a held lease, plus
// a RenewInterval so that running nodes, which remember the epoch, write
// it first. The one exception is a bucket in which nothing was ever
// written (see emptyBucketWait).
func (e *election) holdUntil() time.Time {
	switch {
	case e.cur.released() && e.cur.handedBack, e.cur.expired:
		return time.Time{}
	case !e.cur.present && e.observations == 0 && e.revFloor == 0:
		return e.cur.firstSeen.Add(e.emptyBucketWait())
	case !e.cur.present:
		return e.cur.firstSeen.Add(e.takeoverWait() + e.cfg.RenewInterval)
	}
	return e.cur.firstSeen.Add(e.takeoverWait())
}

// emptyBucketWait is how long to wait before the first write into a
// bucket that held nothing when this node opened it: the takeover wait
// less the bucket's age. Nothing on the server tells a new bucket from one
// deleted and created again a moment ago, under a leader of the old one
// that is cut off and still leads until its deadline; that deadline is at
// most LeaseTTL after the old bucket was deleted, so at most LeaseTTL
// after this one was created. The age is measured on the server's clock
// alone, so only its rate matters (covered by SafetyMargin). A brand-new
// cluster therefore elects its first leader LeaseTTL after creating its
// bucket; a bucket made long before elects at once.
func (e *election) emptyBucketWait() time.Duration {
	return max(e.takeoverWait()-e.store.ageAtOpen, 0)
}

// needsFloor says the lease key no longer carries the epoch or TTL this
// node remembers: it is absent, a delete or purge marker (which a
// compaction may remove next, without a trace on the watch), garbage, or a
// floor record below what this node knows. Only a node that remembers an
// epoch writes one; a node without memory would otherwise take the
// stream's revision as its floor, and revisions restart with a recreated
// bucket (rule 20 in docs/design.md).
func (e *election) needsFloor() bool {
	switch {
	case e.maxEpoch == 0:
		return false
	case !e.cur.valid:
		return true
	case e.cur.lease.Floor:
		return e.cur.lease.Epoch < e.maxEpoch || e.cur.lease.ttl() < e.takeoverWait()
	}
	return false
}

// probeDue says the lease as seen has stayed unchanged for half its
// holder's TTL (half the takeover wait for anything else): renewals, every
// RenewInterval (at most TTL/3), have stopped. The node then reads the key
// back, and again every min(RenewInterval, a quarter of that) until it
// expires, so that a key
// removed or a bucket created again under a watch that shows nothing (its
// consumer went with the old stream, or a compaction removed the marker
// before it was delivered) is found while a node started on the new bucket
// still waits (rule 21 in docs/design.md). A release handed back is taken
// at once and needs none. Steady state sends nothing: renewals keep
// changing the revision.
func (e *election) probeDue(now time.Time) (due bool, at time.Time) {
	// Only a lease record: a read of a delete marker says "not found",
	// as for an absent key, and would restart the wait at every read.
	if !e.cur.valid || e.cur.expired || (e.cur.released() && e.cur.handedBack) {
		return false, time.Time{}
	}
	// Half the holder's TTL: its renewals come at least three times as
	// often. Not half the takeover wait: with mixed TTLs a node started
	// meanwhile, with a short one, waits only its own for an absent key.
	// A floor or a release nobody handed back comes only after an
	// out-of-band change, and nothing renews it: read it back within the
	// shortest TTL any node may have.
	span := e.takeoverWait()
	switch {
	case e.cur.released():
		span = MinLeaseTTL
	case e.cur.lease.ttl() > 0:
		span = min(span, e.cur.lease.ttl())
	}
	at = e.cur.firstSeen.Add(span / 2)
	if e.probedRev == e.cur.rev {
		at = laterOf(at, e.probedAt.Add(min(e.cfg.RenewInterval, span/4)))
	}
	return !now.Before(at), at
}

// noteReconnect restarts the expiry clock after a reconnect: what the node
// saw before may be old news. Waiting longer is always safe.
func (e *election) noteReconnect(now time.Time) {
	if r := e.store.nc.Stats().Reconnects; r != e.reconnects {
		e.reconnects = r
		e.cur.firstSeen = now
		e.cur.expired = false
		e.stableSince = now
	}
	if e.stableSince.IsZero() {
		e.stableSince = now
	}
}

// stepFollowing judges expiry and campaigns when the lease is free.
func (e *election) stepFollowing(now time.Time) (time.Time, bool) {
	if !e.synced {
		return time.Time{}, false
	}
	e.noteReconnect(now)
	if e.campaign && e.needsFloor() && !now.Before(e.retryAt) {
		// The key no longer carries what this node remembers: write it
		// back at once, as a floor record that grants nobody anything.
		e.seed()
		return time.Time{}, true
	}
	if e.cur.released() && e.cur.firstSight && e.store.nc.IsConnected() {
		e.confirmHandBack()
		return time.Time{}, true
	}
	probe, probeAt := e.probeDue(now)
	if probe && e.store.nc.IsConnected() {
		e.probedRev, e.probedAt = e.cur.rev, now
		e.resync()
		return time.Time{}, true
	}
	if probe {
		// Disconnected: look again in a RenewInterval, not at once (a
		// wake-up time in the past would spin the loop until expiry).
		probeAt = now.Add(e.cfg.RenewInterval)
	}
	expiry := e.holdUntil()
	if !expiry.IsZero() && !now.Before(expiry) {
		if !e.store.nc.IsConnected() {
			// Not seeing renewals is not the lease expiring.
			return now.Add(e.cfg.RenewInterval), false
		}
		e.cur.expired = true
		e.log.Info("lease expired on this node's clock", "holder", e.cur.lease.NodeID, "revision", e.cur.rev, "present", e.cur.present)
		return time.Time{}, true
	}
	if !e.campaign || e.err != nil {
		return earliest(expiry, probeAt), false
	}
	if now.Before(e.retryAt) {
		return earliest(expiry, e.retryAt), false
	}
	if e.ownStaleLease() {
		// Our own lease from a tenure that has ended in this process (a
		// renewal, or an acquire, that landed after its deadline): give it
		// back at once.
		e.releaseStale()
		return time.Time{}, true
	}
	if !expiry.IsZero() {
		return earliest(expiry, probeAt, e.askToLead(now)), false
	}
	if wait := e.campaignGate(now); !wait.IsZero() || !e.healthy() {
		return wait, false
	}
	if e.waiting && e.cur.rev <= e.waitAbove {
		// We lost a race at this revision; the winner's record is on its way.
		if !now.Before(e.resyncAt) {
			e.resync()
			return time.Time{}, true
		}
		return e.resyncAt, false
	}
	switch {
	case !e.cur.present:
		e.takeOver(0)
	case e.cur.released() && e.cur.handedBack:
		// A release seen a while ago (a cooldown, a handover window, a
		// failed check held this node back) may be from a bucket since
		// created again: check before the CAS on its revision.
		if now.Sub(e.cur.firstSeen) > e.cfg.RenewInterval && e.bucketRecreated() {
			return time.Time{}, true
		}
		e.acquire(e.cur.rev)
	default: // expired
		e.takeOver(e.cur.rev)
	}
	return time.Time{}, true
}

// ownStaleLease says the lease names this node at the epoch of a tenure
// that has already ended here.
func (e *election) ownStaleLease() bool {
	return e.lastEpoch > 0 && e.cur.valid && e.cur.lease.NodeID == e.cfg.NodeID && e.cur.lease.Epoch == e.lastEpoch
}

// campaignGate returns when this node may campaign for a free lease: zero
// now; otherwise the end of its cooldown or of a handover window left to
// another node. An unhealthy node is not gated here (see healthy): it has
// no time to wait for.
func (e *election) campaignGate(now time.Time) time.Time {
	namedNext := e.cur.released() && e.cur.lease.Next == e.cfg.NodeID
	if now.Before(e.cooldownUntil) && !namedNext {
		// An explicit handover to this node overrides its cooldown.
		return e.cooldownUntil
	}
	if e.cur.released() && e.cur.lease.Next != "" && e.cur.lease.Next != e.cfg.NodeID {
		// Handed over to another node: give it the first chance.
		if until := e.cur.firstSeen.Add(e.handoverWindow()); now.Before(until) {
			return until
		}
	}
	return time.Time{}
}

// handoverWindow is how long, after a release naming a successor, other
// nodes leave the lease to it.
func (e *election) handoverWindow() time.Duration { return e.cfg.RenewInterval }

// askToLead asks a leader of lower priority to hand over, when this node
// has been connected, healthy and following for a full LeaseTTL, at most
// once per LeaseTTL. It returns when to look again (zero: never).
func (e *election) askToLead(now time.Time) time.Time {
	holder := e.cur.lease
	if e.cfg.Priority == 0 || !e.cur.valid || holder.NodeID == "" || holder.NodeID == e.cfg.NodeID || e.cfg.Priority <= holder.Priority || !e.healthy() {
		return time.Time{}
	}
	ready := e.stableSince.Add(e.cfg.LeaseTTL)
	if !e.askedAt.IsZero() {
		ready = laterOf(ready, e.askedAt.Add(e.cfg.LeaseTTL))
	}
	if now.Before(ready) {
		return ready
	}
	e.askedAt = now
	data, _ := json.Marshal(StepDownRequest{To: e.cfg.NodeID, Reason: reasonPriority, Priority: e.cfg.Priority})
	if err := e.store.nc.Publish(NodeControlSubject(e.cfg.ClusterID, holder.NodeID), data); err != nil {
		e.log.Debug("could not ask the leader to yield", "error", err)
	}
	e.log.Info("asked the leader to hand over: this node has a higher priority", "leader", holder.NodeID, "leader_priority", holder.Priority, "priority", e.cfg.Priority)
	return now.Add(e.cfg.LeaseTTL)
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
