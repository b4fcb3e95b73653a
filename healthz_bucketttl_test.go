package cluster

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// A node runs its tenure on its bucket's LeaseTTL, whatever its Config
// says, and /livez judges the tenure it runs: a leader renewing in time
// is live, and one whose renewals stop is not live once a renewal was due
// and has had RequestTimeout to answer, both when the bucket's TTL is
// shorter than the node's Config.LeaseTTL and when it is longer.
func TestHealthzLivenessFollowsTheBucketsLeaseTTL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		bucketTTL, cfgTTL time.Duration
		cfgRenew          time.Duration
	}{
		{"shorter", 3 * time.Second, 10 * time.Second, 3 * time.Second},
		{"longer", 6 * time.Second, time.Second, 250 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, rec, id := setup(t)
			// The first node makes the bucket with its TTL, and releases it.
			maker := testConfig(id, "maker", srv.URL())
			maker.LeaseTTL, maker.RenewInterval = tc.bucketTTL, tc.bucketTTL/4
			m := startNode(t, maker, rec, nil)
			waitOneLeader(t, []*Node{m}, 15*time.Second)
			stopNode(t, m)

			cfg := testConfig(id, "a", srv.URL())
			cfg.LeaseTTL, cfg.RenewInterval, cfg.RequestTimeout = tc.cfgTTL, tc.cfgRenew, 250*time.Millisecond
			a, proxy := proxiedNode(t, srv, cfg, rec)
			waitOneLeader(t, []*Node{a}, 15*time.Second)
			tn, ok := a.Tenure()
			if !ok || tn.TTL != tc.bucketTTL {
				t.Fatalf("a's tenure = %+v, %v; want one on the bucket's TTL %v", tn, ok, tc.bucketTTL)
			}
			if got := a.Config().LeaseTTL; got != tc.bucketTTL {
				t.Errorf("Config().LeaseTTL = %v, want the bucket's %v, the one in force", got, tc.bucketTTL)
			}
			hs := healthzServer(t, a)
			// Live through several renewals of its tenure.
			renewEvery := min(tc.cfgRenew, tc.bucketTTL/3)
			tick := time.NewTicker(renewEvery / 5)
			defer tick.Stop()
			for end := time.Now().Add(4 * renewEvery); time.Now().Before(end); <-tick.C {
				if got, body := probe(t, hs, "/livez"); got != http.StatusOK {
					t.Fatalf("a leader renewing in time: GET /livez = %d %q", got, body)
				}
			}

			proxy.Blackhole()
			cut := time.Now()
			// Its last renewal was sent before the cut; the next was due
			// within renewEvery of it and had RequestTimeout to answer.
			within := renewEvery + cfg.RequestTimeout + 500*time.Millisecond // a probe's time
			natstest.WaitFor(t, within, func() bool {
				got, body := probe(t, hs, "/livez")
				return got == http.StatusServiceUnavailable && strings.Contains(body, "no renewal has succeeded")
			}, "a leader cut off was still live %v after the cut (the bucket's TTL is %v)", within, tc.bucketTTL)
			if !a.IsLeader() {
				t.Errorf("a stopped leading %v after the cut, before /livez said so (the test needs its tenure to outlast the bound)", time.Since(cut))
			}
			proxy.Restore()
			rec.check(t)
		})
	}
}
