package agent

import "testing"

// TestSameElection: what a reload may change without a new node.
func TestSameElection(t *testing.T) {
	base := func() Cluster {
		return Cluster{Name: "web", Election: Election{NodeID: "a", LeaseTTL: Duration(5e9)},
			Checks:  []Check{{Name: "x", File: &FileCheck{Path: "/x"}}},
			Notify:  Notify{BecomeLeader: []string{"a"}},
			VIPs:    []VIP{{Address: "10.0.0.1/24", Interface: "eth0"}},
			Service: &Service{Argv: []string{"w"}}}
	}
	for _, tc := range []struct {
		name   string
		change func(*Cluster)
		same   bool
	}{
		{"nothing", func(*Cluster) {}, true},
		{"notify", func(c *Cluster) { c.Notify.BecomeLeader = []string{"b"} }, true},
		{"checks", func(c *Cluster) { c.Checks = []Check{{Name: "y", TCP: &TCPCheck{Address: "a:1"}}} }, true},
		{"maintenance file", func(c *Cluster) { c.MaintenanceFile = "/m" }, true},
		{"no checks left", func(c *Cluster) { c.Checks = nil }, true},
		{"lease_ttl", func(c *Cluster) { c.Election.LeaseTTL = Duration(6e9) }, false},
		{"vip changed", func(c *Cluster) { c.VIPs[0].Address = "10.0.0.2/24" }, true},
		{"vip added", func(c *Cluster) { c.VIPs = append(c.VIPs, VIP{Address: "10.0.0.3/24", Interface: "eth0"}) }, true},
		{"no vips left", func(c *Cluster) { c.VIPs = nil }, true},
		{"service", func(c *Cluster) { c.Service = &Service{Argv: []string{"v"}} }, false},
		{"connection", func(c *Cluster) { c.Connection.Servers = []string{"nats://x:4222"} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.change(&c)
			if got := sameElection(base(), c); got != tc.same {
				t.Fatalf("sameElection = %v, want %v", got, tc.same)
			}
		})
	}
}
