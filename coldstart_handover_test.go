package cluster

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// A StepDown made as soon as a brand-new cluster has its first leader is
// handed over at once, whatever the followers were doing when the release
// arrived (issue 26: in 1 of 10 fresh clusters no follower led within a
// LeaseTTL, and the node that stepped down led again when its cooldown
// ended; the README's demo showed it as "graceful handover 2.00s").
// Twelve fresh 3-node clusters run side by side, each stepped down by its
// own goroutine the moment it has a leader.
func TestStepDownRightAfterTheFirstElectionHandsOver(t *testing.T) {
	srv, _, base := setup(t)
	const clusters = 12
	type fresh struct {
		rec   *recorder
		nodes []*Node
	}
	var all []fresh
	for i := range clusters {
		f := fresh{rec: newRecorder()}
		for j := range 3 {
			cfg := testConfig(fmt.Sprintf("%s-fresh%d", base, i), fmt.Sprintf("n%d", j), srv.URL())
			// A handover takes milliseconds; a follower that waited the
			// release out would take a LeaseTTL, far past the wait below.
			cfg.LeaseTTL, cfg.RenewInterval = 5*time.Second, time.Second
			f.nodes = append(f.nodes, startNode(t, cfg, f.rec, nil))
		}
		all = append(all, f)
	}
	// poll is WaitFor for a goroutine: it reports instead of failing.
	poll := func(within time.Duration, cond func() bool) bool {
		for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if cond() {
				return true
			}
		}
		return cond()
	}
	errs := make(chan error, clusters)
	var wg sync.WaitGroup
	for i, f := range all {
		wg.Go(func() {
			var first *Node
			if !poll(20*time.Second, func() bool {
				if ls := leaders(f.nodes); len(ls) == 1 {
					first = ls[0]
				}
				return first != nil
			}) {
				errs <- fmt.Errorf("cluster %d: no first leader", i)
				return
			}
			epoch := first.Epoch()
			if err := first.StepDown(ctx(t)); err != nil {
				errs <- fmt.Errorf("cluster %d: StepDown right after the first election: %w", i, err)
				return
			}
			if !poll(2*time.Second, func() bool {
				for _, n := range f.nodes {
					if n != first && n.IsLeader() && n.Epoch() > epoch {
						return true
					}
				}
				return false
			}) {
				errs <- fmt.Errorf("cluster %d: no follower led within 2s of %s's StepDown (LeaseTTL 5s)", i, first.NodeID())
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, f := range all {
		f.rec.check(t)
	}
}
