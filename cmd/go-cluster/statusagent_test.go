package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/health"
)

// TestRenderStatusAgentVIPsAndFailingChecks: members run by go-cluster
// agent publish the VIPs they hold and their failing checks in their
// health replies; status lists them per node (issue 33, defect 10).
func TestRenderStatusAgentVIPsAndFailingChecks(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	// As the replies arrive: JSON decoded into health.Response.
	var resps []health.Response
	if err := json.Unmarshal([]byte(`[
		{"nodeId":"n1","role":"PRIMARY","leader":"n1","epoch":5,"uptimeMs":125000,"custom":{"vips":["10.0.0.100/24","2001:db8::100/64"],"failing_checks":[]}},
		{"nodeId":"n2","role":"PASSIVE","leader":"n1","epoch":5,"uptimeMs":2500,"notReady":"cluster: not ready: check nginx failing","custom":{"vips":[],"failing_checks":["nginx","uplink"]}},
		{"nodeId":"n3","role":"PASSIVE","leader":"n1","epoch":5,"uptimeMs":2500}
	]`), &resps); err != nil {
		t.Fatal(err)
	}
	r := buildStatus("orders", heldLease("n1", 5, now.Add(-90*time.Second)), resps, nil, now)
	if n1 := r.Members[0]; strings.Join(n1.VIPs, ",") != "10.0.0.100/24,2001:db8::100/64" || len(n1.FailingChecks) != 0 {
		t.Errorf("n1: vips %q, failing checks %q", n1.VIPs, n1.FailingChecks)
	}
	if n2 := r.Members[1]; len(n2.VIPs) != 0 || strings.Join(n2.FailingChecks, ",") != "nginx,uplink" {
		t.Errorf("n2: vips %q, failing checks %q", n2.VIPs, n2.FailingChecks)
	}
	var b strings.Builder
	if err := renderStatus(&b, r); err != nil {
		t.Fatal(err)
	}
	want := `NODE  ROLE      HEALTH     LEADER  EPOCH  UPTIME  VIPS                            FAILING CHECKS  NOTES
n1    leader    ok         n1      5      2m5s    10.0.0.100/24,2001:db8::100/64  -
n2    follower  not ready  n1      5      2.5s    -                               nginx,uplink    check nginx failing
n3    follower  ok         n1      5      2.5s
`
	if _, table, _ := strings.Cut(b.String(), "\n\n"); table != want {
		t.Errorf("got:\n%s\nwant:\n%s", table, want)
	}
}
