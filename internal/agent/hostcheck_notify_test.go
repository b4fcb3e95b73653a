package agent

import (
	"strings"
	"testing"
)

// TestCheckHostChecksEveryNotifyCommand: every notify command the file
// names is looked up on this host, the state and fault_cleared ones too.
// On main only the four older events were, so --check passed a missing
// state or fault_cleared command and the agent logged an ERROR when it
// first ran (issue 41, item 4).
func TestCheckHostChecksEveryNotifyCommand(t *testing.T) {
	got := hostProblems(t, `clusters:
  - name: web
    notify:
      become_leader: [/nonexistent/become]
      lose_leadership: [/nonexistent/lose]
      leader_change: [/nonexistent/change]
      fault: [/nonexistent/fault]
      fault_cleared: [/nonexistent/fault-cleared]
      state: [/nonexistent/state]
`, nil)
	want := []string{
		`agent.yaml:4: clusters[0].notify.become_leader[0]: cannot be run on this host: exec: "/nonexistent/become"`,
		`agent.yaml:5: clusters[0].notify.lose_leadership[0]: cannot be run on this host: exec: "/nonexistent/lose"`,
		`agent.yaml:6: clusters[0].notify.leader_change[0]: cannot be run on this host: exec: "/nonexistent/change"`,
		`agent.yaml:7: clusters[0].notify.fault[0]: cannot be run on this host: exec: "/nonexistent/fault"`,
		`agent.yaml:8: clusters[0].notify.fault_cleared[0]: cannot be run on this host: exec: "/nonexistent/fault-cleared"`,
		`agent.yaml:9: clusters[0].notify.state[0]: cannot be run on this host: exec: "/nonexistent/state"`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems:\n%s\nwant %d:\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}
