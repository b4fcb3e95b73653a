package cluster

// The priority a node has now: Config.Priority, lowered at run time by
// SetPriority (keepalived's weighted checks). The machine takes it as an
// event: its records, its priority requests and its answers to those it
// receives carry it from then on.

import (
	"fmt"
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
	n.mu.Lock()
	el := n.el
	n.mu.Unlock()
	if el != nil { // a driver made before the Store reads it; a later one, here
		select {
		case el.cmds <- command{kind: cmdSetPriority, priority: p, reply: make(chan error, 1)}:
		case <-el.exited:
		}
	}
	return nil
}

// Priority is the node's priority now: Config.Priority, or what
// SetPriority last set.
func (n *Node) Priority() int { return int(n.priority.Load()) }
