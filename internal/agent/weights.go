package agent

import "fmt"

// Weighted checks (keepalived's weight): a check with a weight does not
// make the node not ready when it fails; it lowers the node's priority
// by the weight's size. A dependency that fails on every host lowers
// every host alike and the leader stays; one that fails on the leader
// alone moves the leadership to the host of higher priority now, through
// the library's priority hand-over (cluster.Node.SetPriority).

// failingWeight is the sum of the weights of the weighted checks that
// fail now (0 or less); a check with no result yet counts as passing.
func (r *readiness) failingWeight() (sum int, failing []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.states {
		if s.check.Weight != 0 && s.known && !s.passing {
			sum += s.check.Weight
			failing = append(failing, s.check.Name)
		}
	}
	return sum, failing
}

// priorityNow is the node's priority now: the file's, less the weights
// of the failing weighted checks, at least 0; and 0 while a VIP's last
// tenure could not hold it (vipSet.failed), so that this node never
// takes the VIPs from a leader that holds them (issue 41, item 3).
func (m *member) priorityNow() (int, []string) {
	m.mu.Lock()
	r, prio := m.ready, m.cfg.Election.Priority
	m.mu.Unlock()
	sum, failing := r.failingWeight()
	if m.vips.failed() != nil {
		return 0, failing
	}
	return max(prio+sum, 0), failing
}

// applyPriority gives the node the priority now, read at every readiness
// poll, and logs a change once. With preempt: false the node runs with
// priority 0, which no weight lowers.
func (m *member) applyPriority() {
	prio, failing := m.priorityNow()
	vipErr := m.vips.failed()
	m.mu.Lock()
	node, was, wasDemoted := m.node, m.appliedPriority, m.vipDemoted
	m.appliedPriority, m.vipDemoted = prio, vipErr != nil
	m.mu.Unlock()
	if node == nil {
		return
	}
	if err := node.SetPriority(min(prio, node.Config().Priority)); err != nil {
		m.log.Warn("cannot set the priority", "priority", prio, "err", err)
	}
	switch {
	case vipErr != nil && !wasDemoted:
		m.log.Warn("priority 0 until this node has held its VIPs: it takes them only when nobody else leads", "configured", m.config().Election.Priority, "vip_failure", vipErr)
	case vipErr == nil && wasDemoted:
		m.log.Info("priority back: this node has held its VIPs", "priority", prio)
	case prio == was, vipErr != nil:
	default:
		m.log.Info("priority changed by weighted checks", "priority", prio, "configured", m.config().Election.Priority, "failing", failing)
	}
}

// weights checks the checks' weights: negative (a failing check lowers
// the priority), and only where there is a priority to lower.
func (v *validator) weights(p string, checks []Check, e *Election) {
	for i, c := range checks {
		wp := fmt.Sprintf("%s[%d].weight", p, i)
		switch {
		case c.Weight > 0:
			v.bad(wp, "%d: a weight lowers the priority while the check fails, so it is negative (-%d); write a priority that includes a positive one", c.Weight, c.Weight)
		case c.Weight < 0 && e.Priority == 0:
			v.bad(wp, "%d has nothing to lower: election.priority is 0", c.Weight)
		}
	}
}
