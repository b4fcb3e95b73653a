package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/metrics"
	"github.com/ozanturksever/go-cluster/vip"
)

// vipEntry is one VIP of a member: the vip package's Manager, the Hooks
// that make it follow the node, and the Monitor of its interface (nil
// while the member is not started).
type vipEntry struct {
	spec  VIP
	mgr   *vip.Manager
	hooks *vip.Hooks
	mon   *vip.Monitor
}

// vipSet is a member's VIPs as one cluster.Hooks. A reload may add and
// remove VIPs in place: a VIP added while the node leads is acquired in
// the running tenure, a removed one is released, and the node is left
// alone (no failover).
type vipSet struct {
	log     *slog.Logger
	onFault func(reason string) // a VIP's interface became unusable

	mu       sync.Mutex
	entries  []*vipEntry
	tenure   context.Context // the running tenure, nil when not leading
	watching bool            // the monitors run (between watch and close)
}

var _ cluster.Hooks = (*vipSet)(nil)

// newVIPEntries builds the entries of vips; nothing is started.
func newVIPEntries(vips []VIP, log *slog.Logger) ([]*vipEntry, error) {
	out := make([]*vipEntry, 0, len(vips))
	for i, v := range vips {
		vc, err := vipConfig(v, log)
		if err != nil {
			return nil, fmt.Errorf("vips[%d]: %w", i, err)
		}
		mgr, err := vip.NewManager(vc)
		if err != nil {
			return nil, fmt.Errorf("vips[%d]: %w", i, err)
		}
		out = append(out, &vipEntry{spec: v, mgr: mgr, hooks: vip.NewHooks(mgr)})
	}
	return out, nil
}

// snapshot returns the entries as composed hooks, and sets the tenure
// with set (under the lock, so that a reload sees the same state).
func (s *vipSet) snapshot(set func()) cluster.Hooks {
	s.mu.Lock()
	defer s.mu.Unlock()
	if set != nil {
		set()
	}
	hooks := make([]cluster.Hooks, len(s.entries))
	for i, e := range s.entries {
		hooks[i] = e.hooks
	}
	return cluster.ComposeHooks(hooks...)
}

func (s *vipSet) OnBecomeLeader(ctx context.Context) error {
	return s.snapshot(func() { s.tenure = ctx }).OnBecomeLeader(ctx)
}

func (s *vipSet) OnLoseLeadership(ctx context.Context) error {
	return s.snapshot(func() { s.tenure = nil }).OnLoseLeadership(ctx)
}

func (s *vipSet) OnLeaderChange(ctx context.Context, nodeID string) error {
	return s.snapshot(nil).OnLeaderChange(ctx, nodeID)
}

// watch starts the monitors: from now on the VIPs' interfaces are
// tracked and stray copies of the VIPs removed.
func (s *vipSet) watch() {
	s.mu.Lock()
	s.watching = true
	entries := append([]*vipEntry(nil), s.entries...)
	s.mu.Unlock()
	for _, e := range entries {
		s.startMonitor(e)
	}
}

// startMonitor starts e's monitor.
func (s *vipSet) startMonitor(e *vipEntry) {
	mon := vip.NewMonitor(e.mgr, func(err error) {
		if err != nil && s.onFault != nil {
			s.onFault(err.Error())
		}
	})
	s.mu.Lock()
	e.mon = mon
	s.mu.Unlock()
}

// close stops the monitors.
func (s *vipSet) close() {
	s.mu.Lock()
	s.watching = false
	var mons []*vip.Monitor
	for _, e := range s.entries {
		if e.mon != nil {
			mons = append(mons, e.mon)
			e.mon = nil
		}
	}
	s.mu.Unlock()
	for _, m := range mons {
		m.Close()
	}
}

// err says why this node cannot hold one of its VIPs now: an interface
// missing, down or without carrier, or an address a leader could not
// add. It is part of the node's readiness: such a node does not
// campaign, and a leader steps down.
func (s *vipSet) err() error {
	s.mu.Lock()
	entries := append([]*vipEntry(nil), s.entries...)
	mons := make([]*vip.Monitor, len(entries))
	for i, e := range entries {
		mons[i] = e.mon
	}
	s.mu.Unlock()
	var errs []error
	for i, e := range entries {
		if mons[i] != nil {
			errs = append(errs, mons[i].Err())
		}
		errs = append(errs, e.hooks.Err())
	}
	return errors.Join(errs...)
}

// failed is the error of a VIP whose last tenure could not hold it and
// that has not been held since (vip.Hooks.Failed), nil when there is
// none. Such a node never takes leadership from a healthy leader: it
// runs with priority 0 (weights.go) until it has held its VIPs, which it
// does only when nobody else leads.
func (s *vipSet) failed() error {
	s.mu.Lock()
	entries := append([]*vipEntry(nil), s.entries...)
	s.mu.Unlock()
	var errs []error
	for _, e := range entries {
		if err := e.hooks.Failed(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// vipChange is what a reload does to a member's VIPs.
type vipChange struct {
	keep, add, remove []*vipEntry
}

// plan builds the entries of the VIPs of vips that are not there yet; it
// starts and changes nothing. A VIP whose settings changed is removed and
// added again.
func (s *vipSet) plan(vips []VIP) (vipChange, error) {
	s.mu.Lock()
	current := append([]*vipEntry(nil), s.entries...)
	s.mu.Unlock()
	var c vipChange
	var fresh []VIP
	used := make([]bool, len(current))
	for _, v := range vips {
		found := false
		for i, e := range current {
			if !used[i] && reflect.DeepEqual(e.spec, v) {
				used[i], found = true, true
				c.keep = append(c.keep, e)
				break
			}
		}
		if !found {
			fresh = append(fresh, v)
		}
	}
	for i, e := range current {
		if !used[i] {
			c.remove = append(c.remove, e)
		}
	}
	added, err := newVIPEntries(fresh, s.log)
	if err != nil {
		return vipChange{}, err
	}
	c.add = added
	return c, nil
}

// apply makes c the member's VIPs: the removed ones are released first
// (an address may move to a changed entry), then the added ones are
// watched and, in a running tenure, acquired.
func (s *vipSet) apply(c vipChange) {
	s.mu.Lock()
	s.entries = append(append([]*vipEntry(nil), c.keep...), c.add...)
	watching := s.watching
	s.mu.Unlock()
	for _, e := range c.remove {
		s.removeEntry(e)
	}
	s.mu.Lock()
	tenure := s.tenure
	s.mu.Unlock()
	for _, e := range c.add {
		if watching {
			s.startMonitor(e)
		}
		if tenure == nil {
			continue
		}
		s.log.Info("reload: adding a VIP in place", "vip", e.spec.Address)
		if err := e.hooks.OnBecomeLeader(tenure); err != nil {
			s.log.Warn("reload: the VIP added is not held yet", "vip", e.spec.Address, "err", err)
		}
	}
}

// removeEntry releases e's address (and its routes), and any stray copy
// of it, and stops its monitor.
func (s *vipSet) removeEntry(e *vipEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), vip.DefaultReleaseTimeout)
	defer cancel()
	s.log.Info("reload: removing a VIP in place", "vip", e.spec.Address)
	if err := e.hooks.OnLoseLeadership(ctx); err != nil {
		s.log.Warn("reload: removing the VIP failed", "vip", e.spec.Address, "err", err)
	}
	if _, err := e.mgr.RemoveStray(ctx); err != nil {
		s.log.Warn("reload: removing copies of the VIP failed", "vip", e.spec.Address, "err", err)
	}
	s.mu.Lock()
	mon := e.mon
	e.mon = nil
	s.mu.Unlock()
	if mon != nil {
		mon.Close()
	}
}

// states are the VIPs' figures now, in the order of the file.
func (s *vipSet) states() []metrics.VIPState {
	if s == nil {
		return nil // not built yet
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]metrics.VIPState, len(s.entries))
	for i, e := range s.entries {
		st := e.mgr.Stats()
		out[i] = metrics.VIPState{Address: e.spec.Address, Interface: e.spec.Interface, Held: st.Held, Announcements: st.Announcements,
			LastAdded: st.LastAdded, LastRemoved: st.LastRemoved}
	}
	return out
}
