package election

// What Node's methods ask of the machine, and the View its queries read.

import (
	"errors"
	"fmt"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// onStepDown ends the tenure for a StepDown it does not refuse: the
// caller's answer follows the release, or comes at once if Async.
func (m *Machine) onStepDown(now time.Time, c StepDown) {
	if err := m.refuseStepDown(now, c); err != nil {
		m.emit(Reply{Token: c.Token, Err: err})
	} else if c.Async {
		m.beginDrain(now, true, c.To, 0)
		m.emit(Reply{Token: c.Token})
	} else {
		m.beginDrain(now, true, c.To, c.Token)
	}
}

// refuseStepDown says why the node does not obey c (nil to obey).
func (m *Machine) refuseStepDown(now time.Time, c StepDown) error {
	t := m.t
	switch {
	case !m.leading(now) || m.drain != nil || (!c.Received.IsZero() && c.Received.Before(t.acquired)):
		return wire.ErrNotLeader // a request received before the tenure began was meant for its predecessor
	case c.Epoch != 0 && c.Epoch != t.epoch:
		return fmt.Errorf("%w: the leader's epoch is %d, not %d", wire.ErrEpochMismatch, t.epoch, c.Epoch)
	case c.To == m.p.NodeID:
		return fmt.Errorf("%w: %s leads already", wire.ErrAlreadyLeader, c.To)
	case c.Preempt && c.Priority <= m.p.Priority:
		return fmt.Errorf("priority %d is not higher than the leader's %d", c.Priority, m.p.Priority)
	case c.Preempt && now.Sub(t.acquired) < t.ttl:
		return errors.New("the leader has led for less than LeaseTTL; ask again later")
	}
	return nil
}

func (m *Machine) onStop(now time.Time) {
	m.stopping = true
	if m.leading(now) && m.drain == nil { // past its deadline, Handle ended it
		m.beginDrain(now, false, "", 0)
	}
}

// onRenewNow renews a live tenure at once: ValidateLeadership (which
// the driver answers with the Extend of the confirmed renewal, P7) and
// SetMetadata (the next records carry it).
func (m *Machine) onRenewNow(now time.Time) {
	if m.leading(now) && m.drain == nil {
		m.t.renewDue = now
	}
}

// onReadiness takes the driver's word on whether ReadinessCheck lets this
// node campaign; a leader it no longer lets steps down (P14).
func (m *Machine) onReadiness(now time.Time, ready bool) {
	switch {
	case ready && !m.ready:
		m.conn.stableSince = now // P13 counts from here
	case !ready && m.ready && m.leading(now) && m.drain == nil:
		m.beginDrain(now, true, "", 0)
	}
	m.ready = ready
}

// View is what Node's queries read of the machine.
type View struct {
	Lease wire.Lease // the record the key holds, as seen (P1); zero for none
	Epoch int64      // the tenure's, else the record's
	// Tenure: a live tenure, at revision Rev, ending at Deadline.
	Tenure   bool
	Rev      uint64
	Deadline time.Time
	Synced   bool // the watch showed the key's current value (§4.1): a campaign waits for it
	Beyond   int  // the version of a record above this node's the key holds (P16): not ready; 0: none
}

// Snapshot is the machine's view now.
func (m *Machine) Snapshot() View {
	v := View{Synced: m.synced, Beyond: m.beyond()}
	if k := m.cur.kind; k == Held || k == Released {
		v.Lease, v.Epoch = m.cur.d.lease, m.cur.d.lease.Epoch
	}
	if t := m.t; t != nil && !t.ended {
		v.Epoch, v.Tenure, v.Rev, v.Deadline = t.epoch, true, t.rev, t.deadline
	}
	return v
}
