package cluster

import "time"

// TenureDeadline returns the moment this node's live tenure ends unless a
// renewal lands first (last successful renewal sent + LeaseTTL -
// SafetyMargin, on this process's monotonic clock), and false when it does
// not lead. Renewals move it later. No other node can win the lease before
// it, so work the leader must have finished before a successor starts
// (a child process to kill, a device to let go) is bounded by it: a
// supervisor that sees less time left than the work needs to stop can stop
// it early.
func (n *Node) TenureDeadline() (time.Time, bool) {
	n.view.mu.RLock()
	defer n.view.mu.RUnlock()
	if !n.view.leadingLocked(time.Now()) {
		return time.Time{}, false
	}
	return n.view.deadline, true
}
