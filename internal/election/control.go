package election

// The machine's commands: StepDown, Stop, step-down requests over NATS
// and ReadinessCheck results (§4.4, §4.6, §4.7, §4.8).

import (
	"fmt"
	"log/slog"
	"time"
)

func (m *Machine) onStepDown(now time.Time, c StepDown) {
	t := m.own.t
	if t == nil || t.ended || !m.leading(now) || (c.Epoch != 0 && c.Epoch != t.epoch) {
		m.emit(Reply{Token: c.Token, Err: ErrNotLeader})
		return
	}
	if c.Async {
		m.beginDrain(true, c.To, nil)
		m.emit(Reply{Token: c.Token})
		return
	}
	token := c.Token
	m.beginDrain(true, c.To, func(err error) Action { return Reply{Token: token, Err: err} })
}

func (m *Machine) onStop(now time.Time, c Stop) {
	m.hand.stopReq, m.hand.stopToken = true, c.Token
	t := m.own.t
	switch {
	case t == nil || t.ended:
	case !m.leading(now):
		m.lose(now, m.expiredCause(now, t)) // nothing left to hand over
	default:
		m.beginDrain(false, "", nil)
	}
}

// onSetMetadata takes the metadata the node publishes from now on; a
// leader renews at once, so that the others see it without a new epoch.
func (m *Machine) onSetMetadata(now time.Time, e SetMetadata) {
	m.cfg.Metadata = e.Metadata
	if t := m.own.t; t != nil && !t.ended && m.leading(now) {
		t.renewDue = now
	}
	m.emit(Reply{Token: e.Token})
}

// onControl answers a step-down request that arrived over NATS.
func (m *Machine) onControl(now time.Time, r Control) {
	leading := m.leading(now)
	stale := leading && r.Received.Before(m.own.t.acquiredAt)
	if r.Generic && (!leading || stale) {
		m.emit(Reply{Token: r.Token, Control: true, Silent: true}) // only the leader answers on the cluster's subject
		return
	}
	reply := StepDownReply{Node: m.cfg.NodeID}
	req, err := DecodeStepDown(r.Data)
	switch {
	case err != nil:
		reply.Error = err.Error()
	case !leading || stale:
		reply.Error, reply.Leader = ErrNotLeader.Error(), m.knownLeader()
	default:
		reply.Error = m.refuseControl(now, req)
	}
	if reply.Error != "" {
		m.emit(Reply{Token: r.Token, Control: true, Answer: reply})
		return
	}
	epoch, token, to := m.own.t.epoch, r.Token, req.To
	m.logf(slog.LevelInfo, "step-down requested over NATS", "to", req.To, "reason", req.Reason)
	m.beginDrain(true, to, func(err error) Action {
		out := StepDownReply{OK: err == nil, Node: m.cfg.NodeID, Epoch: epoch, To: to}
		if err != nil {
			out.Error = err.Error()
		}
		return Reply{Token: token, Control: true, Answer: out}
	})
}

// refuseControl says why the leader does not obey req ("" to obey).
func (m *Machine) refuseControl(now time.Time, req StepDownRequest) string {
	t := m.own.t
	switch {
	case req.Epoch != 0 && req.Epoch != t.epoch:
		return fmt.Sprintf("%v: the leader's epoch is %d, not %d", ErrEpochMismatch, t.epoch, req.Epoch)
	case req.To == m.cfg.NodeID:
		return fmt.Sprintf("%v: %s leads already", ErrAlreadyLeader, req.To)
	case req.Reason == ReasonPriority && req.Priority <= m.cfg.Priority:
		return fmt.Sprintf("priority %d is not higher than the leader's %d", req.Priority, m.cfg.Priority)
	case req.Reason == ReasonPriority && now.Sub(t.acquiredAt) < m.cfg.LeaseTTL:
		return "the leader has led for less than LeaseTTL; ask again later"
	}
	return ""
}

// healthy says this node may campaign as far as ReadinessCheck goes.
func (m *Machine) healthy() bool {
	return !m.cfg.ReadinessCheck || (m.ready.passed && m.ready.fails < m.cfg.ReadinessThreshold)
}

// onHealth records a ReadinessCheck result; a leader that failed
// ReadinessThreshold in a row steps down.
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
	m.logf(slog.LevelWarn, "readiness check failed", "error", err, "failures", m.ready.fails, "threshold", m.cfg.ReadinessThreshold)
	if m.ready.fails == m.cfg.ReadinessThreshold && m.own.t != nil && !m.own.t.ended {
		m.logf(slog.LevelWarn, "readiness check failed too often: stepping down")
		m.beginDrain(true, "", nil)
	}
}
