package election

// What Node's methods ask of the machine: StepDown, Stop,
// ValidateLeadership, SetMetadata, step-down requests over NATS,
// ReadinessCheck results, and the View its queries read.

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

func (m *Machine) onStepDown(now time.Time, c StepDown) {
	if !m.leading(now) || m.drain != nil || (c.Epoch != 0 && c.Epoch != m.t.epoch) {
		m.emit(Reply{Token: c.Token, Err: ErrNotLeader})
		return
	}
	if c.Async {
		m.beginDrain(now, true, c.To, nil)
		m.emit(Reply{Token: c.Token})
		return
	}
	m.beginDrain(now, true, c.To, func(err error) Action { return Reply{Token: c.Token, Err: err} })
}

func (m *Machine) onStop(now time.Time, c Stop) {
	m.stopReq = &c.Token
	switch {
	case m.leading(now) && m.drain == nil:
		m.beginDrain(now, false, "", nil)
	case m.t != nil && m.drain == nil:
		m.lose(now, fmt.Errorf("%w: stopped past the deadline", ErrLeaseExpired))
	}
}

// onValidate proves the tenure with a renewal on demand: answered once a
// renewal is confirmed, never from a read.
func (m *Machine) onValidate(now time.Time, e Validate) {
	if !m.leading(now) || m.drain != nil {
		m.emit(Reply{Token: e.Token, Err: ErrNotLeader})
		return
	}
	m.checks = append(m.checks, e.Token)
	m.t.renewDue = now
}

// answerChecksAfter answers the waiting calls after a renewal: a
// confirmed one proves the epoch; a failed one asks again at once.
func (m *Machine) answerChecksAfter(now time.Time, ok bool) {
	if len(m.checks) == 0 {
		return
	}
	if ok && m.leading(now) {
		for _, tok := range m.checks {
			m.emit(Reply{Token: tok, Epoch: m.t.epoch})
		}
		m.checks = nil
		return
	}
	m.t.renewDue = now
}

// onSetMetadata: the next records carry it; a leader renews at once.
func (m *Machine) onSetMetadata(now time.Time, e SetMetadata) {
	m.p.Metadata = e.Metadata
	if m.leading(now) {
		m.t.renewDue = now
	}
	m.emit(Reply{Token: e.Token})
}

// onControl answers a step-down request that arrived over NATS.
func (m *Machine) onControl(now time.Time, r Control) {
	leading := m.leading(now) && m.drain == nil && !r.Received.Before(m.t.acquired) // and was when r came
	if r.Generic && !leading {
		m.emit(Reply{Token: r.Token, Control: true, Silent: true}) // only the leader answers there
		return
	}
	reply := wire.StepDownReply{Node: m.p.NodeID}
	req, err := wire.DecodeStepDown(r.Data)
	switch {
	case err != nil:
		reply.Error = err.Error()
	case !leading:
		reply.Error, reply.Leader = ErrNotLeader.Error(), m.knownLeader(now)
	default:
		reply.Error = m.refuseControl(now, req)
	}
	if reply.Error != "" {
		m.emit(Reply{Token: r.Token, Control: true, Answer: reply})
		return
	}
	epoch := m.t.epoch
	m.logf(slog.LevelInfo, "step-down requested over NATS", "to", req.To, "reason", req.Reason)
	m.beginDrain(now, true, req.To, func(err error) Action {
		out := wire.StepDownReply{OK: err == nil, Node: m.p.NodeID, Epoch: epoch, To: req.To}
		if err != nil {
			out.Error = err.Error()
		}
		return Reply{Token: r.Token, Control: true, Answer: out}
	})
}

// refuseControl says why the leader does not obey req ("" to obey).
func (m *Machine) refuseControl(now time.Time, req wire.StepDownRequest) string {
	t := m.t
	switch {
	case req.Epoch != 0 && req.Epoch != t.epoch:
		return fmt.Sprintf("%v: the leader's epoch is %d, not %d", ErrEpochMismatch, t.epoch, req.Epoch)
	case req.To == m.p.NodeID:
		return fmt.Sprintf("%v: %s leads already", ErrAlreadyLeader, req.To)
	case req.Reason == wire.ReasonPriority && req.Priority <= m.p.Priority:
		return fmt.Sprintf("priority %d is not higher than the leader's %d", req.Priority, m.p.Priority)
	case req.Reason == wire.ReasonPriority && now.Sub(t.acquired) < t.ttl:
		return "the leader has led for less than LeaseTTL; ask again later"
	}
	return ""
}

// healthy says this node may campaign as far as ReadinessCheck goes.
func (m *Machine) healthy() bool {
	return !m.p.ReadinessCheck || (m.ready.passed && m.ready.fails < m.p.ReadinessThreshold)
}

// onHealth records a ReadinessCheck result; a leader whose check failed
// ReadinessThreshold times in a row steps down (P14).
func (m *Machine) onHealth(now time.Time, err error) {
	was := m.healthy()
	m.ready.last = err
	if err == nil {
		m.ready.passed, m.ready.fails = true, 0
		if !was {
			m.conn.stableSince = now
			m.logf(slog.LevelInfo, "readiness check passes; the node campaigns")
		}
		return
	}
	m.ready.fails++
	if was && !m.healthy() {
		m.logf(slog.LevelWarn, "readiness check failed", "error", err, "failures", m.ready.fails, "threshold", m.p.ReadinessThreshold)
	}
	if m.ready.fails == m.p.ReadinessThreshold && m.leading(now) && m.drain == nil {
		m.logf(slog.LevelWarn, "readiness check failed too often: stepping down", "error", err)
		m.beginDrain(now, true, "", nil)
	}
}

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
