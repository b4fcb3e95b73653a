package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// exhaustedEpoch reports whether err is the permanent error a node stops
// with when the next epoch would pass math.MaxInt64 (docs/design.md §5.5:
// the epoch never wraps; at the maximum the node refuses with a named
// permanent error).
func exhaustedEpoch(err error) bool { return errors.Is(err, cluster.ErrEpochExhausted) }

// TestChaosForgedMaxEpoch: someone writes a valid-looking lease record at
// or next to the largest epoch, for a node that does not exist, with a plain
// KV Put. Correct nodes hand out at most the epochs left (one, from
// MaxInt64-1) and then refuse to campaign: every campaigning node either
// keeps following or stops with a permanent error; no tenure gets a wrapped,
// repeated or lower epoch.
//
// This is a test of its own, not a FaultKind of the chaos schedule: after
// it, a correct cluster can never elect again without an operator, since
// the only way back is to lower the epoch in the store (or recreate the
// bucket), which is exactly an epoch regression, and the run's later
// checks (a leader after healing, epochs above every earlier one) would
// have nothing left to check. Injecting it as the last fault of a run would
// hide the same problem in the recovery phase.
func TestChaosForgedMaxEpoch(t *testing.T) {
	for _, v := range []struct {
		name   string
		epoch  int64
		holder string // "" forges a released record
	}{
		{"held at MaxInt64", math.MaxInt64, "ghost"},
		{"held at MaxInt64-1", math.MaxInt64 - 1, "ghost"},
		{"released at MaxInt64", math.MaxInt64, ""},
	} {
		t.Run(v.name, func(t *testing.T) {
			natstest.CheckLeaks(t)
			forgedMaxEpoch(t, v.epoch, v.holder)
		})
	}
}

func forgedMaxEpoch(t *testing.T, epoch int64, holder string) {
	ttl := *flagTTL
	r := setUp(t, Options{Seed: 1, Nodes: 3, LeaseTTL: ttl, LongTTLNodes: -1, ClusterID: "forged", Log: t.Logf})
	r.start = time.Now()

	// Forge only in steady state: a leader has led for a few renewals, so
	// no acquisition is in flight, and every tenure that starts after the
	// forged write has read it.
	natstest.WaitFor(t, 20*time.Second, func() bool {
		ts := r.checker.Tenures()
		return r.leader() != nil && len(ts) > 0 && time.Since(ts[len(ts)-1].Start) > 3*r.opts.RenewInterval &&
			r.fence.Stats().Accepted > 0
	}, "no steady leader before the forged record")
	now := time.Now()
	rec := cluster.Lease{NodeID: holder, Epoch: epoch, AcquiredAt: now, ExpiresAt: now.Add(ttl), TTLMillis: ttl.Milliseconds()}
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.DecodeLease(data, 1); err != nil {
		t.Fatalf("the forged record must look valid, but DecodeLease refuses it: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := r.js.KeyValue(ctx, r.bucket())
	if err != nil {
		t.Fatal(err)
	}
	forged := time.Now()
	rev, err := kv.Put(ctx, cluster.LeaseKey, data)
	if err != nil {
		t.Fatal(err)
	}
	r.logf("forged lease at rev %d: %s", rev, data)

	// Watch: nodes that stop are not started again; a follower is restarted
	// once, before the forged record expires, so that a node whose first
	// record is the forged one is tested too; any tenure that starts is
	// stepped down once proven, to make the nodes campaign again.
	stops := map[*member]error{}
	restarted, steppedDown := false, map[string]bool{}
	end := forged.Add(6 * ttl)
	for time.Now().Before(end) {
		for _, m := range r.members {
			if err, failed := m.failed(); failed {
				stops[m] = err
				r.logf("%s stopped on its own: %v", m.id, err)
			}
		}
		if !restarted && time.Since(forged) > ttl/2 {
			restarted = true
			if m := r.follower(); m != nil {
				err := m.stop()
				if err == nil {
					err = m.start()
				}
				r.logf("restart %s with no memory of earlier epochs: %s", m.id, errString(err))
			}
		}
		if ts := r.checker.Tenures(); len(ts) > 0 {
			last := ts[len(ts)-1]
			if last.Start.After(forged) && last.End.IsZero() && !steppedDown[last.Instance] && time.Since(last.Start) > 3*r.opts.RenewInterval {
				steppedDown[last.Instance] = true
				if m := r.leader(); m != nil {
					sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
					err := m.current().StepDown(sctx)
					scancel()
					r.logf("StepDown %s (epoch %d): %s", m.id, last.Epoch, errString(err))
					end = laterTime(end, time.Now().Add(4*ttl))
				}
			}
		}
		waitTick()
	}

	// At most one tenure may follow the forged record: at MaxInt64, from a
	// record at MaxInt64-1.
	allowed := 0
	if epoch < math.MaxInt64 && holder != "" {
		allowed = 1
	}
	var after []Tenure
	for _, ten := range r.checker.Tenures() {
		if ten.Start.After(forged) {
			after = append(after, ten)
		}
	}
	for i, ten := range after {
		if i >= allowed || ten.Epoch != math.MaxInt64 {
			got := fmt.Sprint(ten.Epoch)
			if ten.Epoch == 0 {
				got = "unknown"
			}
			t.Errorf("tenure after the forged record (epoch %d, holder %q): %s from +%v with epoch %s; at most %d allowed, at epoch MaxInt64",
				epoch, holder, ten.Instance, ten.Start.Sub(r.start).Round(time.Millisecond), got, allowed)
		}
	}
	for _, m := range r.members {
		err, stopped := stops[m]
		switch {
		case stopped && !exhaustedEpoch(err):
			t.Errorf("%s stopped with %v; want a permanent error for an exhausted epoch", m.id, err)
		case !stopped && m.current() != nil && m.current().IsLeader():
			t.Errorf("%s still leads %v after the forged record", m.id, time.Since(forged).Round(time.Millisecond))
		}
	}
	r.stopAll()
	r.writers.Wait()
	for _, v := range append(r.checker.Check(true), r.fence.Violations()...) {
		t.Errorf("violation: %s", v)
	}
	if t.Failed() {
		for _, l := range r.log {
			t.Logf("%s", l)
		}
	}
	t.Logf("after the forged record (epoch %d, holder %q): %d tenures, stops: %s", epoch, holder, len(after), stopSummary(r, stops))
}

// follower returns a running member that does not lead, or nil.
func (r *run) follower() *member {
	for _, m := range r.members {
		if n := m.current(); n != nil && !n.IsLeader() {
			return m
		}
	}
	return nil
}

func stopSummary(r *run, stops map[*member]error) string {
	var parts []string
	for _, m := range r.members {
		if err, ok := stops[m]; ok {
			parts = append(parts, fmt.Sprintf("%s: %v", m.id, err))
		} else {
			parts = append(parts, m.id+": still running")
		}
	}
	return strings.Join(parts, "; ")
}

func laterTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// waitTick paces a polling loop that has its own deadline.
func waitTick() {
	timer := time.NewTimer(5 * time.Millisecond)
	defer timer.Stop()
	<-timer.C
}
