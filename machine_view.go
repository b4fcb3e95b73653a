package cluster

// What the driver shows of the machine to the Node's queries (IsLeader,
// Leader, Epoch, Lease, Ready, the fenced state's lease revision).

import (
	"fmt"
	"time"
)

// machineView is a snapshot of the machine for the Node's view.
type machineView struct {
	epoch  int64 // the live tenure's, else the lease record's
	lease  Lease // the lease record seen
	hasRec bool
	// The tenure, while it lives (not ended, deadline not passed as far as
	// the machine knows): its latest lease revision and deadline.
	tenure   bool
	rev      uint64
	deadline time.Time
	ready    error // what Node.Ready reports
}

// snapshot is the machine as the Node's queries see it.
func (m *machine) snapshot() machineView {
	v := machineView{lease: m.lv.cur.lease, hasRec: m.lv.cur.valid, ready: m.readyErr()}
	if v.hasRec {
		v.epoch = v.lease.Epoch
	}
	if t := m.own.t; t != nil && !t.ended {
		v.epoch = t.epoch
		if !t.cancelled {
			v.tenure, v.rev, v.deadline = true, t.rev, t.deadline
		}
	}
	return v
}

// readyErr is what Node.Ready reports for the readiness as the machine
// knows it.
func (m *machine) readyErr() error {
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
