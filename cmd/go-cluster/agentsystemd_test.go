package main

import (
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/agent"
)

// TestWatchdogBound: half of lease_ttl - renew_interval of the shortest
// lease, with the library's defaults for what the file leaves out.
func TestWatchdogBound(t *testing.T) {
	t.Parallel()
	cl := func(ttl, renew time.Duration) agent.Cluster {
		return agent.Cluster{Election: agent.Election{LeaseTTL: agent.Duration(ttl), RenewInterval: agent.Duration(renew)}}
	}
	for _, tc := range []struct {
		name     string
		clusters []agent.Cluster
		want     time.Duration
	}{
		{"no clusters: the default lease", nil, 3500 * time.Millisecond},
		{"default lease (10s, renewed every 3s)", []agent.Cluster{cl(0, 0)}, 3500 * time.Millisecond},
		{"lease_ttl 2s: renewed every 500ms", []agent.Cluster{cl(2*time.Second, 0)}, 750 * time.Millisecond},
		{"renew_interval set", []agent.Cluster{cl(time.Second, 200*time.Millisecond)}, 400 * time.Millisecond},
		{"the shortest lease counts", []agent.Cluster{cl(0, 0), cl(2*time.Second, 0), cl(30*time.Second, 0)}, 750 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := watchdogBound(&agent.Config{Clusters: tc.clusters}); got != tc.want {
				t.Fatalf("watchdogBound = %v, want %v", got, tc.want)
			}
		})
	}
}
