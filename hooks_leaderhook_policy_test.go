package cluster

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// Under LeaderHookErrorStepsDown a node whose OnBecomeLeader fails steps
// down and another leads; under the default it goes on leading, the
// failure counted.
func TestOnBecomeLeaderErrorPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy    LeaderHookPolicy
		handsOver bool
	}{{LeaderHookErrorLogged, false}, {LeaderHookErrorStepsDown, true}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			srv, rec, id := setup(t)
			var failed atomic.Int64
			broken := HookFuncs{BecomeLeader: func(context.Context) error {
				failed.Add(1)
				return errors.New("port 8080 taken")
			}}
			cfg := testConfig(id, "a", srv.URL())
			cfg.OnBecomeLeaderError = tc.policy
			a := startNode(t, cfg, rec, broken)
			natstest.WaitFor(t, 10*time.Second, func() bool { return failed.Load() > 0 }, "a's OnBecomeLeader did not run")
			b := startNode(t, testConfig(id, "b", srv.URL()), rec, nil)
			if tc.handsOver {
				natstest.WaitFor(t, 5*time.Second, b.IsLeader, "b did not lead after a's OnBecomeLeader failed")
				if a.IsLeader() {
					t.Error("a still leads after its OnBecomeLeader failed")
				}
			} else {
				natstest.WaitFor(t, 5*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a lead")
				if !a.IsLeader() {
					t.Error("a does not lead; a failed OnBecomeLeader is only logged under this policy")
				}
			}
			rec.check(t)
		})
	}
	if _, err := NewNode(Config{ClusterID: "c", NodeID: "a", NATSURLs: []string{"nats://127.0.0.1:1"}, OnBecomeLeaderError: "restart"}, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("an unknown policy = %v, want ErrInvalidConfig", err)
	}
}
