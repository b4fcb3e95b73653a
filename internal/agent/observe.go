package agent

import (
	"slices"
	"time"

	"github.com/ozanturksever/go-cluster/metrics"
)

// What the agent reports of a cluster besides the library's view: its
// checks and VIPs, for /metrics (metrics.AgentSource), /healthz and the
// health replies that `go-cluster status` shows.

var _ metrics.AgentSource = (*member)(nil)

// setTook records how long check i's last probe took.
func (r *readiness) setTook(i int, d time.Duration) {
	r.mu.Lock()
	r.states[i].took = d
	r.mu.Unlock()
}

// checkStates are the checks' standings now.
func (r *readiness) checkStates() []metrics.CheckState {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]metrics.CheckState, len(r.states))
	for i, s := range r.states {
		out[i] = metrics.CheckState{Name: s.check.Name, Passing: s.known && s.passing, Took: s.took}
	}
	return out
}

// CheckStates are the member's checks now (metrics.AgentSource).
func (m *member) CheckStates() []metrics.CheckState {
	m.mu.Lock()
	r := m.ready
	m.mu.Unlock()
	return r.checkStates()
}

// VIPStates are the member's VIPs now (metrics.AgentSource).
func (m *member) VIPStates() []metrics.VIPState {
	return m.vips.states()
}

// heldVIPs are the addresses of the VIPs this node holds now.
func (m *member) heldVIPs() []string {
	var out []string
	for _, v := range m.VIPStates() {
		if v.Held {
			out = append(out, v.Address)
		}
	}
	return out
}

// failingChecks are the names of the checks that do not pass now (no
// result yet included), sorted.
func (m *member) failingChecks() []string {
	var out []string
	for _, c := range m.CheckStates() {
		if !c.Passing {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Keys of the custom values an agent's node publishes in its health
// replies (health.Response.Custom), which `go-cluster status` lists.
const (
	// CustomVIPs: the VIPs the node holds, with their prefix lengths.
	CustomVIPs = "vips"
	// CustomFailingChecks: the names of its checks that do not pass.
	CustomFailingChecks = "failing_checks"
)

// publish puts the VIPs held and the failing checks in the node's health
// replies. It runs with every readiness check the node makes (at most
// ReadinessInterval apart, 500ms by default) and when the checker starts.
func (m *member) publish() {
	m.mu.Lock()
	c := m.checker
	m.mu.Unlock()
	if c == nil {
		return
	}
	c.SetCustom(CustomVIPs, orEmpty(m.heldVIPs()))
	c.SetCustom(CustomFailingChecks, orEmpty(m.failingChecks()))
}

// orEmpty is list, or an empty list for nil: published as [], not null.
func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
