package main

import (
	"strings"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// status shows the cluster's election protocol while a rolling upgrade
// is under way, and which member cannot follow it (docs/production.md,
// "Moving to a new version").
func TestStatusShowsTheProtocolsOfARollingUpgrade(t *testing.T) {
	t.Parallel()
	next := wire.Protocol + 1
	for _, c := range []struct {
		name     string
		cluster  int
		speaks   []int // each member's highest
		line     string
		stranded string
	}{
		{"every member moved", wire.Protocol, []int{next, next}, "every member speaks 4", ""},
		{"one member left", wire.Protocol, []int{next, wire.Protocol}, "", ""},
		{"moved, a member of the old build back", next, []int{next, wire.Protocol}, "protocol  4", "n2"},
	} {
		r := statusReport{Cluster: "o", Bucket: "cluster-o", Lease: stateHeld, Leader: "n1", Protocol: c.cluster}
		var members []wire.MemberRecord
		for i, hi := range c.speaks {
			members = append(members, wire.MemberRecord{NodeID: "n" + string(rune('1'+i)), Kind: wire.MemberCampaigning, Protocols: []int{wire.Protocol, hi}})
		}
		mergeMembers(&r, members, nil)
		var out strings.Builder
		if err := renderStatus(&out, r); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if c.line == "" && strings.Contains(got, "protocol ") {
			t.Errorf("%s: a protocol line where nothing moves:\n%s", c.name, got)
		}
		if c.line != "" && !strings.Contains(got, c.line) {
			t.Errorf("%s: want %q in:\n%s", c.name, c.line, got)
		}
		for _, m := range r.Members {
			note := strings.Join(m.Notes, "; ")
			if stranded := strings.Contains(note, "follows and never leads"); stranded != (m.Node == c.stranded) {
				t.Errorf("%s: %s's notes %q", c.name, m.Node, note)
			}
		}
	}
}
