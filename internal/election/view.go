package election

// What the driver shows of the machine to the Node's queries (IsLeader,
// Leader, Epoch, Lease, Ready, the fenced state's lease revision).

import (
	"fmt"
	"time"
)

// View is a snapshot of the machine for the Node's view.
type View struct {
	Epoch  int64 // the live tenure's, else the lease record's
	Lease  Lease // the lease record seen
	HasRec bool
	// The tenure, while it lives (not ended, deadline not passed as far as
	// the machine knows): its latest lease revision and deadline.
	Tenure   bool
	Rev      uint64
	Deadline time.Time
	Ready    error // what Node.Ready reports
}

// Snapshot is the machine as the Node's queries see it.
func (m *Machine) Snapshot() View {
	v := View{Lease: m.lv.cur.lease, HasRec: m.lv.cur.valid, Ready: m.readyErr()}
	if v.HasRec {
		v.Epoch = v.Lease.Epoch
	}
	if t := m.own.t; t != nil && !t.ended {
		v.Epoch = t.epoch
		if !t.cancelled {
			v.Tenure, v.Rev, v.Deadline = true, t.rev, t.deadline
		}
	}
	return v
}

// readyErr is what Node.Ready reports for the readiness as the machine
// knows it.
func (m *Machine) readyErr() error {
	r := m.ready
	switch {
	case m.healthy():
		return nil
	case !r.passed && r.last == nil:
		return fmt.Errorf("%w: no readiness check has completed yet", ErrNotReady)
	case !r.passed:
		return fmt.Errorf("%w: no readiness check has passed yet: %w", ErrNotReady, r.last)
	}
	return fmt.Errorf("%w: %d readiness checks failed in a row: %w", ErrNotReady, r.fails, r.last)
}
