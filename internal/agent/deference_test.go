package agent

import (
	"errors"
	"testing"
	"time"
)

// TestDeferenceHoldsBackForAReadyHigherPeerForABoundedTime: a node holds
// back only for a live peer of higher priority that is ready, not
// yielding, while nobody leads; and for one peer at most 1.5 lease_ttl.
func TestDeferenceHoldsBackForAReadyHigherPeerForABoundedTime(t *testing.T) {
	const ttl = 2 * time.Second
	self := Standing{Node: "b", Priority: 90, Ready: true}
	high := Standing{Node: "a", Priority: 100, Ready: true}
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name  string
		peers []Standing
		hold  bool
	}{
		{"nobody else", nil, false},
		{"a ready peer of higher priority", []Standing{high}, true},
		{"of equal priority", []Standing{{Node: "a", Priority: 90, Ready: true}}, false},
		{"of lower priority", []Standing{{Node: "a", Priority: 80, Ready: true}}, false},
		{"not ready", []Standing{{Node: "a", Priority: 100}}, false},
		{"yielding after a step-down", []Standing{{Node: "a", Priority: 100, Ready: true, Yielding: true}}, false},
		{"someone leads", []Standing{high, {Node: "c", Priority: 10, Ready: true, Leading: true}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDeference(ttl, quiet())
			err := d.check(t0, self, tc.peers)
			if got := errors.Is(err, errHoldingBack); got != tc.hold {
				t.Fatalf("holds back: %v (%v), want %v", got, err, tc.hold)
			}
		})
	}
	t.Run("self leads", func(t *testing.T) {
		me := self
		me.Leading = true
		if err := newDeference(ttl, quiet()).check(t0, me, []Standing{high}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		d := newDeference(ttl, quiet())
		for at := time.Duration(0); at < ttl+ttl/2; at += ttl / 4 {
			if err := d.check(t0.Add(at), self, []Standing{high}); err == nil {
				t.Fatalf("stopped holding back %v after it began, before 1.5 lease_ttl", at)
			}
		}
		if err := d.check(t0.Add(ttl+ttl/2), self, []Standing{high}); err != nil {
			t.Fatalf("still holding back after 1.5 lease_ttl: %v", err)
		}
		// A leader seen starts the count again.
		if err := d.check(t0.Add(2*ttl), self, []Standing{{Node: "c", Leading: true}}); err != nil {
			t.Fatal(err)
		}
		if err := d.check(t0.Add(3*ttl), self, []Standing{high}); err == nil {
			t.Fatal("did not hold back again once a leader had been seen")
		}
	})
}
