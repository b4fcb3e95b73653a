package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

func TestNextEvent(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	held := func(node string, epoch int64, rev uint64) leaseState {
		return leaseState{State: stateHeld, Revision: rev, Written: at, Lease: wire.Lease{NodeID: node, Epoch: epoch}}
	}
	released := func(epoch int64, next string, rev uint64) leaseState {
		return leaseState{State: stateReleased, Revision: rev, Written: at, Lease: wire.Lease{Epoch: epoch, Next: next}}
	}
	steps := []struct {
		cur   leaseState
		all   bool
		show  bool
		event string
		prev  string
	}{
		{held("a", 1, 1), false, true, eventLeader, ""},   // the first value
		{held("a", 1, 2), false, false, eventRenewed, ""}, // a renewal: hidden
		{held("a", 1, 3), true, true, eventRenewed, ""},   // shown with --all
		{released(1, "b", 4), false, true, stateReleased, "a"},
		{held("b", 2, 5), false, true, eventLeader, ""},  // after a release, the previous holder is not known
		{held("c", 3, 6), false, true, eventLeader, "b"}, // a takeover
		{leaseState{State: stateDeleted, Revision: 7, Written: at}, false, true, stateDeleted, "c"},
		{leaseState{State: stateInvalid, Revision: 8, Written: at, Problem: "junk"}, false, true, stateInvalid, ""},
		{leaseState{State: stateInvalid, Revision: 9, Written: at, Problem: "junk"}, false, false, stateInvalid, ""},
	}
	var prev *leaseState
	for i, s := range steps {
		ev, show := nextEvent(prev, s.cur, s.all)
		if show != s.show || ev.Event != s.event || ev.Previous != s.prev || ev.Revision != s.cur.Revision || !ev.Time.Equal(at) {
			t.Errorf("step %d: %+v shown=%v, want %s (previous %q) shown=%v", i, ev, show, s.event, s.prev, s.show)
		}
		cur := s.cur
		prev = &cur
	}
}

func TestRenderWatchEvent(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ev   watchEvent
		want string
	}{
		{watchEvent{Time: at, Event: eventLeader, Leader: "b", Epoch: 2, Previous: "a", Revision: 5},
			"2026-05-01T12:00:00.000Z  leader    b leads, epoch 2 (was a)  [revision 5]\n"},
		{watchEvent{Time: at, Event: stateReleased, Epoch: 2, Previous: "b", Next: "c", Revision: 6},
			"2026-05-01T12:00:00.000Z  released  no leader: released at epoch 2 by b, handed over to c  [revision 6]\n"},
		{watchEvent{Time: at, Event: stateAbsent},
			"2026-05-01T12:00:00.000Z  absent    no leader: no node has won the lease yet\n"},
	} {
		var b strings.Builder
		if err := renderWatchEvent(&b, tc.ev); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("got  %q\nwant %q", b.String(), tc.want)
		}
	}
}
