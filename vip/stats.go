package vip

import (
	"sync/atomic"
	"time"
)

// Stats is what a Manager has done, for metrics: read with
// Manager.Stats, lock-free.
type Stats struct {
	// Held is true from a successful Acquire until Release: the Manager
	// keeps the address on its interface.
	Held bool
	// Announcements counts the announcement rounds sent (a gratuitous ARP
	// request and reply, or an unsolicited neighbour advertisement).
	Announcements uint64
	// LastAdded and LastRemoved are when the Manager last added the
	// address to the interface (on Acquire, or putting it back) and last
	// removed it; zero if never.
	LastAdded, LastRemoved time.Time
}

// stats are a Manager's counters; atomics, so that reading them never
// waits for a netlink request under the Manager's lock.
type stats struct {
	held          atomic.Bool
	announcements atomic.Uint64
	lastAdded     atomic.Int64 // unix nanoseconds; 0: never
	lastRemoved   atomic.Int64
}

func (s *stats) added()   { s.lastAdded.Store(time.Now().UnixNano()) }
func (s *stats) removed() { s.lastRemoved.Store(time.Now().UnixNano()) }

func (s *stats) snapshot() Stats {
	out := Stats{Held: s.held.Load(), Announcements: s.announcements.Load()}
	if t := s.lastAdded.Load(); t != 0 {
		out.LastAdded = time.Unix(0, t)
	}
	if t := s.lastRemoved.Load(); t != 0 {
		out.LastRemoved = time.Unix(0, t)
	}
	return out
}
