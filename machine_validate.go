package cluster

// The machine's ValidateLeadership: a call is answered by the renewals it
// asks for at once; it proves the tenure only through a compare-and-swap
// that succeeds, never through a read (§4.3).

import (
	"fmt"
	"time"
)

// mValidation is a ValidateLeadership call waiting for a renewal.
type mValidation struct {
	token    uint64
	attempts int // renewals answered since the call
}

// validationAttempts is how many renewals a call waits for: a second one
// covers a conflict resolved by adopting this node's own late write.
const validationAttempts = 2

func (m *machine) onValidate(now time.Time, e evValidate) {
	t := m.own.t
	switch {
	case t == nil || t.ended:
		m.emit(actReply{token: e.token, err: ErrNotLeader})
		return
	case !m.leading(now):
		m.emit(actReply{token: e.token, err: fmt.Errorf("%w: %w", ErrNotLeader, ErrLeaseExpired)})
		return
	}
	m.checks = append(m.checks, mValidation{token: e.token})
	t.renewDue = now
}

// answerChecks answers the waiting calls after a renewal's answer; ok
// says the renewal succeeded.
func (m *machine) answerChecks(now time.Time, ok bool) {
	if len(m.checks) == 0 {
		return
	}
	t := m.own.t
	live := t != nil && !t.ended && m.leading(now)
	keep := m.checks[:0]
	for _, c := range m.checks {
		c.attempts++
		switch {
		case ok && live:
			m.emit(actReply{token: c.token, epoch: t.epoch})
		case live && c.attempts < validationAttempts:
			keep = append(keep, c)
		case live:
			m.emit(actReply{token: c.token, err: fmt.Errorf("%w: renewal did not succeed", ErrLeaseExpired)})
		default:
			m.emit(actReply{token: c.token, err: fmt.Errorf("%w: %w", ErrNotLeader, ErrEpochMismatch)})
		}
	}
	m.checks = keep
	if len(keep) > 0 {
		t.renewDue = now
	}
}

// endChecks answers the waiting calls when the tenure ends with cause
// (nil for a step-down or Stop).
func (m *machine) endChecks(cause error) {
	err := error(ErrNotLeader)
	if cause != nil {
		err = fmt.Errorf("%w: %w", ErrNotLeader, cause)
	}
	for _, c := range m.checks {
		m.emit(actReply{token: c.token, err: err})
	}
	m.checks = nil
}
