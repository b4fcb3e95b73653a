package election

// The machine's ValidateLeadership: a call is answered by the renewals it
// asks for at once; it proves the tenure only through a compare-and-swap
// that succeeds, never through a read (§4.3).

import (
	"fmt"
	"time"
)

// Validation is a ValidateLeadership call waiting for a renewal.
type Validation struct {
	token    uint64
	attempts int // renewals answered since the call
}

// validationAttempts is how many renewals a call waits for: a second one
// covers a conflict resolved by adopting this node's own late write.
const validationAttempts = 2

func (m *Machine) onValidate(now time.Time, e Validate) {
	t := m.own.t
	switch {
	case t == nil || t.ended:
		m.emit(Reply{Token: e.Token, Err: ErrNotLeader})
		return
	case !m.leading(now):
		m.emit(Reply{Token: e.Token, Err: fmt.Errorf("%w: %w", ErrNotLeader, ErrLeaseExpired)})
		return
	}
	m.checks = append(m.checks, Validation{token: e.Token})
	t.renewDue = now
}

// answerChecks answers the waiting calls after a renewal's answer; ok
// says the renewal succeeded.
func (m *Machine) answerChecks(now time.Time, ok bool) {
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
			m.emit(Reply{Token: c.token, Epoch: t.epoch})
		case live && c.attempts < validationAttempts:
			keep = append(keep, c)
		case live:
			m.emit(Reply{Token: c.token, Err: fmt.Errorf("%w: renewal did not succeed", ErrLeaseExpired)})
		default:
			m.emit(Reply{Token: c.token, Err: fmt.Errorf("%w: %w", ErrNotLeader, ErrEpochMismatch)})
		}
	}
	m.checks = keep
	if len(keep) > 0 {
		t.renewDue = now
	}
}

// endChecks answers the waiting calls when the tenure ends with cause
// (nil for a step-down or Stop).
func (m *Machine) endChecks(cause error) {
	err := error(ErrNotLeader)
	if cause != nil {
		err = fmt.Errorf("%w: %w", ErrNotLeader, cause)
	}
	for _, c := range m.checks {
		m.emit(Reply{Token: c.token, Err: err})
	}
	m.checks = nil
}
