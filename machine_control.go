package cluster

// The machine's commands: StepDown, Stop, step-down requests over NATS
// and ReadinessCheck results (§4.4, §4.6, §4.7, §4.8).

import (
	"fmt"
	"log/slog"
	"time"
)

func (m *machine) onStepDown(now time.Time, c evStepDown) {
	t := m.own.t
	if t == nil || t.ended || !m.leading(now) || (c.epoch != 0 && c.epoch != t.epoch) {
		m.emit(actReply{token: c.token, err: ErrNotLeader})
		return
	}
	if c.async {
		m.beginDrain(true, c.to, nil)
		m.emit(actReply{token: c.token})
		return
	}
	token := c.token
	m.beginDrain(true, c.to, func(err error) mAction { return actReply{token: token, err: err} })
}

func (m *machine) onStop(now time.Time, c evStop) {
	m.hand.stopReq, m.hand.stopToken = true, c.token
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
func (m *machine) onSetMetadata(now time.Time, e evSetMetadata) {
	m.cfg.Metadata = e.metadata
	if t := m.own.t; t != nil && !t.ended && m.leading(now) {
		t.renewDue = now
	}
	m.emit(actReply{token: e.token})
}

// onControl answers a step-down request that arrived over NATS.
func (m *machine) onControl(now time.Time, r evControl) {
	leading := m.leading(now)
	stale := leading && r.received.Before(m.own.t.acquiredAt)
	if r.generic && (!leading || stale) {
		m.emit(actReply{token: r.token, control: true, silent: true}) // only the leader answers on the cluster's subject
		return
	}
	reply := StepDownReply{Node: m.cfg.NodeID}
	req, err := decodeStepDown(r.data)
	switch {
	case err != nil:
		reply.Error = err.Error()
	case !leading || stale:
		reply.Error, reply.Leader = ErrNotLeader.Error(), m.knownLeader()
	default:
		reply.Error = m.refuseControl(now, req)
	}
	if reply.Error != "" {
		m.emit(actReply{token: r.token, control: true, reply: reply})
		return
	}
	epoch, token, to := m.own.t.epoch, r.token, req.To
	m.logf(slog.LevelInfo, "step-down requested over NATS", "to", req.To, "reason", req.Reason)
	m.beginDrain(true, to, func(err error) mAction {
		out := StepDownReply{OK: err == nil, Node: m.cfg.NodeID, Epoch: epoch, To: to}
		if err != nil {
			out.Error = err.Error()
		}
		return actReply{token: token, control: true, reply: out}
	})
}

// refuseControl says why the leader does not obey req ("" to obey).
func (m *machine) refuseControl(now time.Time, req StepDownRequest) string {
	t := m.own.t
	switch {
	case req.Epoch != 0 && req.Epoch != t.epoch:
		return fmt.Sprintf("%v: the leader's epoch is %d, not %d", ErrEpochMismatch, t.epoch, req.Epoch)
	case req.To == m.cfg.NodeID:
		return fmt.Sprintf("%v: %s leads already", ErrAlreadyLeader, req.To)
	case req.Reason == reasonPriority && req.Priority <= m.cfg.Priority:
		return fmt.Sprintf("priority %d is not higher than the leader's %d", req.Priority, m.cfg.Priority)
	case req.Reason == reasonPriority && now.Sub(t.acquiredAt) < m.cfg.LeaseTTL:
		return "the leader has led for less than LeaseTTL; ask again later"
	}
	return ""
}

// healthy says this node may campaign as far as ReadinessCheck goes.
func (m *machine) healthy() bool {
	return m.cfg.ReadinessCheck == nil || (m.ready.passed && m.ready.fails < m.cfg.ReadinessThreshold)
}

// onHealth records a ReadinessCheck result; a leader that failed
// ReadinessThreshold in a row steps down.
func (m *machine) onHealth(now time.Time, err error) {
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
