package cluster

// The priority a node has now: Config.Priority, lowered at run time by
// SetPriority (keepalived's weighted checks, issue 33). The election
// machine reads Config.Priority only (internal/election is left as it
// is), so the driver puts the priority now where it counts: in the
// records this node writes as leader, in the priority requests it sends
// as follower, and in its answers to those it receives.

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// SetPriority sets the priority this node has from now on, between 0 and
// Config.Priority: keepalived's weighted checks lower a node's priority
// while they fail, so that a problem of one host moves the leadership to
// a healthier one while a problem of every host keeps it where it is.
// A leader publishes it with its next renewal (within RenewInterval) and
// hands over when a follower of higher priority asks (Config.Priority);
// a follower asks a leader whose record carries a lower priority than
// its own now, and does not ask when it has been lowered to or below
// it. The error wraps ErrInvalidConfig for a priority out of range.
// Config keeps the Priority NewNode was given. It may be called at any
// time, before Start too.
func (n *Node) SetPriority(p int) error {
	if p < 0 || p > n.cfg.Priority {
		return fmt.Errorf("%w: set priority: %d is not between 0 and Config.Priority (%d)", ErrInvalidConfig, p, n.cfg.Priority)
	}
	n.priority.Store(int64(p))
	return nil
}

// Priority is the node's priority now: Config.Priority, or what
// SetPriority last set.
func (n *Node) Priority() int { return int(n.priority.Load()) }

// priorityNow is the node's priority now (Node.SetPriority).
func (d *driver) priorityNow() int { return int(d.priority.Load()) }

// withPriorityNow is the value of w with the priority now in place of
// Config.Priority, which the machine wrote, in this node's held records.
func (d *driver) withPriorityNow(w election.Write) []byte {
	p := d.priorityNow()
	if p == d.cfg.Priority || (w.Purpose != election.Acquire && w.Purpose != election.Renew) {
		return w.Value
	}
	var l election.Lease
	if json.Unmarshal(w.Value, &l) != nil || l.NodeID != d.cfg.NodeID {
		return w.Value
	}
	l.Priority = p
	data, err := json.Marshal(l)
	if err != nil {
		return w.Value
	}
	return data
}

// abovePriorityNow says a priority request from this node would be
// above the holder's, as its record says: the machine asked comparing
// Config.Priority, which may be higher than the priority now.
func (d *driver) abovePriorityNow(holder string) bool {
	l := d.m.Snapshot().Lease
	return l.NodeID != holder || d.priorityNow() > l.Priority
}

// inConfigTerms is a step-down request as the machine is to judge it: it
// compares a priority request with Config.Priority, so one above the
// priority now but not above Config.Priority is raised just above
// Config.Priority. Any other request is passed as it is.
func (d *driver) inConfigTerms(data []byte) []byte {
	p := d.priorityNow()
	if p == d.cfg.Priority || d.cfg.Priority == math.MaxInt {
		return data
	}
	req, err := election.DecodeStepDown(data)
	if err != nil || req.Reason != election.ReasonPriority || req.Priority <= p || req.Priority > d.cfg.Priority {
		return data
	}
	req.Priority = d.cfg.Priority + 1
	out, err := json.Marshal(req)
	if err != nil {
		return data
	}
	return out
}
