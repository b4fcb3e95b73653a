package election

// What the driver publishes to the public queries, and the stop the
// driver forces when its teardown cuts the loop short.

import (
	"fmt"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// View is what Node's queries read of the machine.
type View struct {
	Lease  wire.Lease // the record the key holds, as seen
	HasRec bool       // the key holds a record (P1)
	Epoch  int64      // the tenure's, else the record's
	Ready  error      // nil when the node may campaign as far as ReadinessCheck goes
	// Tenure: a live tenure, at revision Rev, ending at Deadline.
	Tenure   bool
	Rev      uint64
	Deadline time.Time
}

// Snapshot is the machine's view now.
func (m *Machine) Snapshot() View {
	v := View{Ready: m.readyErr()}
	if k := m.cur.kind; k == Held || k == Released {
		v.Lease, v.HasRec, v.Epoch = m.cur.d.lease, true, m.cur.d.lease.Epoch
	}
	if t := m.t; t != nil && !t.ended {
		v.Epoch, v.Tenure, v.Rev, v.Deadline = t.epoch, true, t.rev, t.deadline
	}
	return v
}

// readyErr is what Node.Ready reports.
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

// StopNow ends the machine at once, without a release: the driver's
// teardown gave up waiting. The tenure ends, and every caller waiting
// hears ErrStopped.
func (m *Machine) StopNow() []Action {
	m.out = nil
	if m.state == Stopped {
		return nil
	}
	if m.t != nil && !m.t.ended {
		m.endTenure(ErrStopped)
	}
	if d := m.drain; d != nil && d.reply != nil {
		m.emit(d.reply(ErrStopped))
	}
	m.drain, m.t = nil, nil
	for _, ev := range m.kept {
		switch e := ev.(type) {
		case StepDown:
			m.emit(Reply{Token: e.Token, Err: ErrStopped})
		case Validate:
			m.emit(Reply{Token: e.Token, Err: ErrStopped})
		case SetMetadata:
			m.emit(Reply{Token: e.Token, Err: ErrStopped})
		case Stop:
			m.emit(Reply{Token: e.Token})
		case Control:
			m.emit(Reply{Token: e.Token, Control: true, Silent: true})
		}
	}
	m.kept = nil
	if m.stopReq != nil {
		m.emit(Reply{Token: *m.stopReq})
	}
	m.stopped()
	return m.out
}
