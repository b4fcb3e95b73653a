package vip

import (
	"context"
	"net/netip"
	"testing"
	"time"
)

// TestStatsCountWhatTheManagerDid: Stats says whether the address is
// held, how many announcement rounds went out (each one seen by the
// peer), and when the address was last added and removed.
func TestStatsCountWhatTheManagerDid(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	frames := p.peer.captureARP(t, peerIf, netip.MustParseAddr(vip4))
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 3, AnnounceInterval: 20 * time.Millisecond})
	if s := m.Stats(); s.Held || s.Announcements != 0 || !s.LastAdded.IsZero() || !s.LastRemoved.IsZero() {
		t.Fatalf("Stats of a new Manager: %+v", s)
	}
	before := time.Now()
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	expectGARP(t, frames, netip.MustParseAddr(vip4), p.host.mac(t, hostIf), 3, 5*time.Second)
	waitFor(t, 5*time.Second, "3 announcement rounds counted", func() (bool, error) { return m.Stats().Announcements == 3, nil })
	if s := m.Stats(); !s.Held || s.LastAdded.Before(before) || !s.LastRemoved.IsZero() {
		t.Fatalf("Stats after Acquire: %+v", s)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if s := m.Stats(); s.Held || s.LastRemoved.Before(s.LastAdded) || s.Announcements != 3 {
		t.Fatalf("Stats after Release: %+v", s)
	}
}
