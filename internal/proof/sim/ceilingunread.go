package sim

// The cluster's ceiling unread: a campaigning node's Confirm reads the
// cluster's ceiling (the account's bucket, or a members bucket) beside the
// bucket's stream info, and that read fails on its own when the stream
// that keeps it has no leader to answer (its leader cut off with the
// bucket's; seen on three real servers in
// TestServerBehindARecreateMakesNoSecondLeader). The store fails that
// Confirm (store.Confirm), as it fails one whose own read fails. For a
// while after each incarnation ends, half the Confirms meet such a
// server. A stream of its own, so that every other draw of a seed stays
// as it was.

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

const ceilingUnreadName = "ceiling-unread"

var errCeilingUnread = errors.New("sim: the members bucket's stream info: no answer")

// newCeilingUnreads draws whether this seed's Confirms may fail to read
// the ceiling, and their stream.
func newCeilingUnreads(seed uint64, opt Options) (*rand.Rand, bool) {
	r := rand.New(rand.NewPCG(seed, 0xce11))
	return r, r.IntN(2) == 0 && !opt.excluded(ceilingUnreadName)
}

// ceilingUnreadFrom opens a window of up to 5 s, from an incarnation's
// end, in which the members stream has no leader; not past the moment
// every fault stops.
func (w *world) ceilingUnreadFrom() {
	if !w.ceilingUnread {
		return
	}
	w.ceilingUnreadUntil = min(w.now+time.Duration(w.ceilingUnreads.Int64N(int64(5*time.Second))), w.quietAt)
	w.logf("the members stream has no leader until %.6fs", w.ceilingUnreadUntil.Seconds())
}

// confirmAnswer is a campaigning node's Confirm answered with b: failed
// when it meets the members stream without a leader, or, under the
// negative control Options.CeilingUnreadIsNone, answered without the
// ceiling, as the store did before it failed such a Confirm.
func (w *world) confirmAnswer(p *proc, c election.Confirm, b election.Incarnation) election.Event {
	if p.cfg.Observer || w.now >= w.ceilingUnreadUntil || w.ceilingUnreads.IntN(2) != 0 {
		return election.ConfirmResult{ID: c.ID, Bucket: b}
	}
	w.logf("%s: Confirm: the cluster's ceiling unread", p.cfg.NodeID)
	if w.opt.CeilingUnreadIsNone {
		b.ClusterMaxTTL = 0
		return election.ConfirmResult{ID: c.ID, Bucket: b}
	}
	return withError(c, errCeilingUnread, election.Transient)
}
