package health

import (
	"maps"
	"sync"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
)

var (
	rolePrimary = cluster.RolePrimary.String()
	rolePassive = cluster.RolePassive.String()
)

// state is what a Checker reports; safe for concurrent use.
type state struct {
	mu      sync.RWMutex
	started time.Time // zero until Start
	role    string
	leader  string
	custom  map[string]any
	epoch   func() int64
	ready   func() error
}

func newState() *state {
	return &state{role: rolePassive, custom: map[string]any{}}
}

func (s *state) setStarted(t time.Time) {
	s.mu.Lock()
	s.started = t
	s.mu.Unlock()
}

func (s *state) setRole(role string) {
	s.mu.Lock()
	s.role = role
	s.mu.Unlock()
}

func (s *state) setLeader(leader string) {
	s.mu.Lock()
	s.leader = leader
	s.mu.Unlock()
}

// update applies fn to role and leader under one lock, so a reader never
// sees half of a transition.
func (s *state) update(fn func(role, leader *string)) {
	s.mu.Lock()
	fn(&s.role, &s.leader)
	s.mu.Unlock()
}

func (s *state) setCustom(key string, value any) {
	s.mu.Lock()
	if value == nil {
		delete(s.custom, key)
	} else {
		s.custom[key] = value
	}
	s.mu.Unlock()
}

func (s *state) setEpochFunc(fn func() int64) {
	s.mu.Lock()
	s.epoch = fn
	s.mu.Unlock()
}

func (s *state) setReadyFunc(fn func() error) {
	s.mu.Lock()
	s.ready = fn
	s.mu.Unlock()
}

// notReady returns the text of the readiness source's error: "" when the
// node is ready, or when there is no source.
func (s *state) notReady() string {
	s.mu.RLock()
	ready := s.ready
	s.mu.RUnlock()
	if ready == nil {
		return ""
	}
	if err := ready(); err != nil { // outside the lock, as for the epoch
		return notReadyText(err)
	}
	return ""
}

// notReadyText is err's text, never empty: "" means ready on the wire.
func notReadyText(err error) string {
	if msg := err.Error(); msg != "" {
		return msg
	}
	return "not ready"
}

// snapshot fills the state fields of a Response as of now. The custom map
// is a copy, so it can be encoded without the lock while SetCustom goes on.
func (s *state) snapshot(r *Response, now time.Time) {
	r.Timestamp = now.UnixMilli()
	s.mu.RLock()
	if !s.started.IsZero() {
		r.UptimeMs = now.Sub(s.started).Milliseconds()
	}
	r.Role = s.role
	r.Leader = s.leader
	if len(s.custom) > 0 {
		r.Custom = maps.Clone(s.custom)
	}
	epoch := s.epoch
	s.mu.RUnlock()
	if epoch != nil {
		r.Epoch = epoch() // outside the lock: the source may take its own
	}
	r.NotReady = s.notReady()
}
