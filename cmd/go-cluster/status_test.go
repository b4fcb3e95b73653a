package main

import (
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

func heldLease(node string, epoch int64, acquired time.Time) leaseState {
	return leaseState{
		State: stateHeld, Revision: 42, Written: acquired.Add(time.Minute),
		Lease: wire.Lease{NodeID: node, Epoch: epoch, AcquiredAt: acquired, ExpiresAt: acquired.Add(time.Minute + 10*time.Second), TTLMillis: 10000},
	}
}

func TestBuildStatusMergesLeaseAndHealth(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	lease := heldLease("n2", 5, now.Add(-90*time.Second))
	resps := []health.Response{
		{NodeID: "n3", Role: "PASSIVE", Leader: "n1", Epoch: 4, UptimeMs: 1000},
		{NodeID: "n1", Role: "PRIMARY", Leader: "n1", Epoch: 4, UptimeMs: 1000},
		{NodeID: "n4", Error: "custom value cannot be encoded"},
	}
	r := buildStatus("orders", lease, resps, nil, now)
	if r.Leader != "n2" || r.Epoch != 5 || r.Revision != 42 || r.Bucket != "cluster-orders" || r.TTLMs != 10000 {
		t.Errorf("report %+v", r)
	}
	if r.LeadingForMs == nil || *r.LeadingForMs != 90000 || r.ClockSkew {
		t.Errorf("leading for %v, want 90s", r.LeadingForMs)
	}
	var nodes []string
	for _, m := range r.Members {
		nodes = append(nodes, m.Node)
	}
	if strings.Join(nodes, ",") != "n1,n2,n3,n4" {
		t.Fatalf("members %v, want sorted n1..n4 (n2 from the lease)", nodes)
	}
	n1, n2, n3, n4 := r.Members[0], r.Members[1], r.Members[2], r.Members[3]
	if n2.Health != healthNoAnswer || !n2.HoldsLease {
		t.Errorf("the silent holder %+v", n2)
	}
	if strings.Join(n1.Notes, "; ") != "says it leads but does not hold the lease; sees leader n1; epoch 1 behind" {
		t.Errorf("n1 notes %q", n1.Notes)
	}
	if len(n3.Notes) != 2 || n3.HoldsLease {
		t.Errorf("n3 %+v", n3)
	}
	if n4.Health != healthError || n4.Error == "" || len(n4.Notes) != 0 {
		t.Errorf("n4 %+v", n4)
	}
}

func TestBuildStatusStates(t *testing.T) {
	t.Parallel()
	now := time.Now()
	future := heldLease("n1", 1, now.Add(time.Hour))
	if r := buildStatus("o", future, nil, nil, now); !r.ClockSkew || *r.LeadingForMs != 0 {
		t.Errorf("acquired_at ahead of us: %+v", r)
	}
	released := leaseState{State: stateReleased, Revision: 7, Lease: wire.Lease{Epoch: 3, Next: "n2"}}
	r := buildStatus("o", released, []health.Response{{NodeID: "n2", Role: "PASSIVE"}}, errors.New("partial"), now)
	if r.Leader != "" || r.Epoch != 3 || r.Next != "n2" || r.LeadingForMs != nil || r.HealthError != "partial" {
		t.Errorf("released: %+v", r)
	}
	if len(r.Members) != 1 || r.Members[0].HoldsLease {
		t.Errorf("released members %+v", r.Members)
	}
	if r := buildStatus("o", leaseState{State: stateAbsent}, nil, nil, now); r.Leader != "" || r.Members == nil {
		t.Errorf("absent: %+v (members must encode as [])", r)
	}
}

func TestRenderStatus(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := buildStatus("orders", heldLease("n1", 5, now.Add(-90*time.Second)), []health.Response{
		{NodeID: "n1", Role: "PRIMARY", Leader: "n1", Epoch: 5, UptimeMs: 125000},
		{NodeID: "n2", Role: "PASSIVE", Leader: "n1", Epoch: 5, UptimeMs: 2500},
	}, nil, now)
	var b strings.Builder
	if err := renderStatus(&b, r); err != nil {
		t.Fatal(err)
	}
	want := `cluster  orders (bucket cluster-orders)
leader   n1
epoch    5
leading  ~1m30s, since 2026-05-01T11:58:30.000Z (wall-clock estimate from acquired_at)
lease    revision 42, last written 2026-05-01T11:59:30.000Z, ttl 10s

NODE  ROLE      HEALTH  LEADER  EPOCH  UPTIME
n1    leader    ok      n1      5      2m5s
n2    follower  ok      n1      5      2.5s
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	// A member that is not ready: its health says so, and the notes why.
	b.Reset()
	r = buildStatus("orders", heldLease("n1", 5, now.Add(-90*time.Second)), []health.Response{
		{NodeID: "n1", Role: "PRIMARY", Leader: "n1", Epoch: 5, UptimeMs: 125000},
		{NodeID: "n2", Role: "PASSIVE", Leader: "n1", Epoch: 4, UptimeMs: 2500, NotReady: "cluster: not ready: no readiness check has passed yet: database unreachable"},
		{NodeID: "n3", NotReady: "cluster: not ready: disk full", Error: "encode response: bad custom value"},
	}, nil, now)
	if n2 := r.Members[1]; n2.Health != healthNotReady || n2.NotReady == "" {
		t.Errorf("n2 %+v", n2)
	}
	if err := renderStatus(&b, r); err != nil {
		t.Fatal(err)
	}
	want = `NODE  ROLE      HEALTH     LEADER  EPOCH  UPTIME  NOTES
n1    leader    ok         n1      5      2m5s
n2    follower  not ready  n1      4      2.5s    no readiness check has passed yet: database unreachable; epoch 1 behind
n3    -         error      -       -      -       encode response: bad custom value; not ready: disk full
`
	if _, table, _ := strings.Cut(b.String(), "\n\n"); table != want {
		t.Errorf("got:\n%s\nwant:\n%s", table, want)
	}

	b.Reset()
	released := leaseState{State: stateReleased, Revision: 7, Lease: wire.Lease{Epoch: 3, Next: "n2"}}
	if err := renderStatus(&b, buildStatus("o", released, nil, nil, now)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "leader   none: released at epoch 3, handed over to n2") || !strings.Contains(b.String(), "no member is announced or answers status requests") {
		t.Errorf("released:\n%s", b.String())
	}
}

func TestRenderStatusMetadata(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	lease := heldLease("n1", 5, now.Add(-90*time.Second))
	lease.Lease.Metadata = map[string]string{"zone": "eu west", "addr": "10.0.0.5:8080", "empty": "", "note": `a,b="c"`}
	r := buildStatus("orders", lease, nil, nil, now)
	if len(r.Metadata) != 4 || r.Metadata["addr"] != "10.0.0.5:8080" {
		t.Errorf("metadata %v, want the lease's", r.Metadata)
	}
	var b strings.Builder
	if err := renderStatus(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "metadata  addr=10.0.0.5:8080, empty=\"\", note=\"a,b=\\\"c\\\"\", zone=\"eu west\"\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("got:\n%s\nwant a line %q", b.String(), want)
	}

	// A released lease names no leader, so no metadata.
	released := leaseState{State: stateReleased, Revision: 7, Lease: wire.Lease{Epoch: 3, Metadata: map[string]string{"addr": "x"}}}
	if r := buildStatus("o", released, nil, nil, now); r.Metadata != nil {
		t.Errorf("released: metadata %v", r.Metadata)
	}
}

// status, built and run as a real process, shows the metadata the leader
// publishes in its lease record, as text and as JSON.
func TestCLIStatusMetadata(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	srv := natstest.RunServer(t)
	md := map[string]string{"addr": "10.0.0.5:8080", "zone": "eu-west-1"}
	m := startMember(t, srv, "md", "m1", func(c *cluster.Config) { c.Metadata = md })
	natstest.WaitFor(t, 15*time.Second, m.node.IsLeader, "m1 did not lead")
	r := runCLI(t, bin, nil, "-s", srv.URL(), "--cluster", "md", "status", "--timeout", "10s")
	if r.code != 0 || !strings.Contains(r.stdout, "\nmetadata  addr=10.0.0.5:8080, zone=eu-west-1\n") {
		t.Errorf("status: exit %d, stderr %q, no metadata line:\n%s", r.code, r.stderr, r.stdout)
	}
	r = runCLI(t, bin, nil, "-s", srv.URL(), "--cluster", "md", "status", "--json", "--timeout", "10s")
	var st statusReport
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("status --json: exit %d, %v: %q %q", r.code, err, r.stdout, r.stderr)
	}
	if !maps.Equal(st.Metadata, md) {
		t.Errorf("status --json metadata %v, want %v", st.Metadata, md)
	}
}

// The tables and notes say leader and follower for a health reply's
// PRIMARY and PASSIVE; --json keeps the reply's role as it comes, for
// scripts.
func TestStatusRoleWords(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := buildStatus("orders", heldLease("n2", 5, now.Add(-time.Minute)), []health.Response{
		{NodeID: "n1", Role: "PRIMARY", Leader: "n1", Epoch: 5, UptimeMs: 1000},
		{NodeID: "n2", Role: "PASSIVE", Leader: "n2", Epoch: 5, UptimeMs: 1000},
		{NodeID: "n3", Role: "warming", Leader: "n2", Epoch: 5, UptimeMs: 1000},
	}, nil, now)
	if got := strings.Join(r.Members[0].Notes, "; "); got != "says it leads but does not hold the lease; sees leader n1" {
		t.Errorf("n1 notes %q", got)
	}
	if got := strings.Join(r.Members[1].Notes, "; "); got != "holds the lease but reports follower" {
		t.Errorf("n2 notes %q", got)
	}
	var b strings.Builder
	if err := renderStatus(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, row := range [][]string{
		{"n1", "leader", "ok", "n1", "5"}, {"n2", "follower", "ok", "n2", "5"}, {"n3", "warming", "ok", "n2", "5"},
	} {
		if !containsRow(b.String(), row...) {
			t.Errorf("no row %v:\n%s", row, b.String())
		}
	}
	if strings.Contains(b.String(), "PRIMARY") || strings.Contains(b.String(), "PASSIVE") {
		t.Errorf("the table says PRIMARY or PASSIVE:\n%s", b.String())
	}

	var js strings.Builder
	if err := writeJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Members []struct {
			Node string `json:"node"`
			Role string `json:"role"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(js.String()), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Members) != 3 || out.Members[0].Role != "PRIMARY" || out.Members[1].Role != "PASSIVE" {
		t.Errorf("--json members %+v: the role field keeps the health reply's PRIMARY/PASSIVE", out.Members)
	}
}
