package agent

import (
	"log/slog"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/vip"
)

func TestVIPConfigCarriesLabelAndRoutes(t *testing.T) {
	refresh := Duration(0)
	v := VIP{Address: "10.0.0.100/24", Interface: "eth0", Label: "eth0:web", NetNS: "/var/run/netns/blue",
		GARP: GARP{Count: 2, Interval: Duration(50 * time.Millisecond), Refresh: &refresh},
		Routes: []Route{
			{To: "10.9.0.0/16", Via: "10.0.0.1", Metric: 10},
			{To: "default", Via: "10.0.0.1", Table: 100},
			{To: "10.8.0.0/24", Src: "10.0.0.5"},
		}}
	got, err := vipConfig(v, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	want := []vip.Route{
		{To: netip.MustParsePrefix("10.9.0.0/16"), Via: netip.MustParseAddr("10.0.0.1"), Metric: 10},
		{To: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("10.0.0.1"), Table: 100},
		{To: netip.MustParsePrefix("10.8.0.0/24"), Src: netip.MustParseAddr("10.0.0.5")},
	}
	if got.Address != "10.0.0.100" || got.Netmask != 24 || got.Interface != "eth0" || got.Label != "eth0:web" ||
		got.NetNS != v.NetNS || got.AnnounceCount != 2 || got.AnnounceInterval != 50*time.Millisecond || got.RefreshInterval != 0 ||
		!slices.Equal(got.Routes, want) {
		t.Fatalf("vipConfig = %+v\nroutes %v, want %v", got, got.Routes, want)
	}
	six, err := vipConfig(VIP{Address: "2001:db8::100/64", Interface: "eth0", Routes: []Route{{To: "default"}}, GARP: GARP{Refresh: &refresh}}, nil)
	if err != nil || six.Routes[0].To != netip.MustParsePrefix("::/0") {
		t.Fatalf("IPv6 default route: %v, %v", six.Routes, err)
	}
}

// Every VIP of the sample file makes a Manager: the agent's checks and
// the vip package's agree.
func TestSampleVIPsMakeManagers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("vip managers need Linux")
	}
	cfg, err := Load("../../packaging/agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cfg.WithDefaults("host-1").Clusters {
		for i, v := range cl.VIPs {
			vc, err := vipConfig(v, slog.Default())
			if err == nil {
				_, err = vip.NewManager(vc)
			}
			if err != nil {
				t.Errorf("cluster %s vips[%d]: %v", cl.Name, i, err)
			}
		}
	}
}

// TestPreemptDelayLongerThanTheLeaseTTL: a preempt_delay longer than
// lease_ttl is accepted and reaches the library's Config (which waits it
// out, issue 23); a negative or a too long one is refused naming
// election.preempt_delay.
func TestPreemptDelayLongerThanTheLeaseTTL(t *testing.T) {
	cfg, err := Parse("agent.yaml", []byte("clusters:\n  - name: web\n    election: {node_id: a, lease_ttl: 2s, preempt_delay: 30s}\n"))
	if err != nil {
		t.Fatalf("preempt_delay 30s with lease_ttl 2s: %v", err)
	}
	e := cfg.WithDefaults("host-1").Clusters[0].Election
	if got := e.nodeConfig("web", "a").PreemptDelay; got != 30*time.Second {
		t.Fatalf("the library's Config has PreemptDelay %v, want 30s", got)
	}
	for _, tc := range []struct{ delay, want string }{
		{"-1s", "agent.yaml:3: clusters[0].election.preempt_delay: PreemptDelay -1s must be between 0 and 24h0m0s"},
		{"25h", "agent.yaml:3: clusters[0].election.preempt_delay: PreemptDelay 25h0m0s must be between 0 and 24h0m0s"},
	} {
		got := problems(t, "clusters:\n  - name: web\n    election: {lease_ttl: 2s, preempt_delay: "+tc.delay+"}\n")
		if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("preempt_delay %s: got %q\nwant one starting %q", tc.delay, got, tc.want)
		}
	}
}
