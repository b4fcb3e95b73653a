package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Announced members are listed with their status roles; one announced
// that does not answer is down; a node with a health checker keeps its
// health columns.
func TestMergeMembers(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	r := buildStatus("o", heldLease("a", 4, now.Add(-time.Minute)), []health.Response{
		{NodeID: "b", Role: "PASSIVE", Leader: "a", Epoch: 4, UptimeMs: 1500},
	}, nil, now)
	started := now.Add(-time.Hour)
	members := []wire.MemberRecord{
		{NodeID: "a", Kind: wire.MemberCampaigning, StartedAt: started},
		{NodeID: "b", Kind: wire.MemberCampaigning, StartedAt: started},
		{NodeID: "c", Kind: wire.MemberCampaigning, StartedAt: started, Metadata: map[string]string{"zone": "z3"}},
	}
	replies := []wire.StatusReply{
		{Node: "a", Role: wire.StatusLeader, Leader: "a", Epoch: 4, StartedAt: started},
		{Node: "b", Role: wire.StatusFollower, Leader: "a", Epoch: 4, StartedAt: started},
	}
	mergeMembers(&r, members, replies)
	if len(r.Members) != 3 {
		t.Fatalf("%d members: %+v", len(r.Members), r.Members)
	}
	want := []struct{ node, state, health string }{
		{"a", wire.StatusLeader, ""}, {"b", wire.StatusFollower, healthOK},
		{"c", stateDown, healthNoAnswer},
	}
	for i, w := range want {
		m := r.Members[i]
		if m.Node != w.node || m.State != w.state || m.Health != w.health || len(m.Notes) != 0 {
			t.Errorf("member %d = %+v, want %s %s health %q", i, m, w.node, w.state, w.health)
		}
	}
	if !r.Members[0].HoldsLease || r.Members[1].Kind != wire.MemberCampaigning || r.Members[2].Metadata["zone"] != "z3" {
		t.Errorf("members %+v", r.Members)
	}
	var b bytes.Buffer
	if err := renderStatus(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, row := range [][]string{
		{"a", "leader", "-", "a", "4"}, {"b", "follower", "ok", "a", "4", "1.5s"},
		{"c", "down", "no", "answer", "-", "-", "-"},
	} {
		if !containsRow(out, row...) {
			t.Errorf("no row %v:\n%s", row, out)
		}
	}

	// A leader that answers neither request is listed as before.
	r = buildStatus("o", heldLease("x", 4, now), nil, nil, now)
	mergeMembers(&r, nil, nil)
	if len(r.Members) != 1 || r.Members[0].Health != healthNoAnswer || r.Members[0].State != "" {
		t.Errorf("silent leader: %+v", r.Members)
	}
}
