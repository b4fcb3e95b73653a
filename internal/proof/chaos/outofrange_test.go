package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TestChaosOutOfRangeEpoch: someone writes a well-formed lease record of
// this protocol whose epoch lies outside its incarnation's range (base,
// base + revision], with a plain publish: at MaxInt64, which once left no
// epoch to hand out, one above the range, or at the base. Such a record is
// unknown (docs/design.md P1, §5.1): the leader demotes, nobody stops,
// no node takes it before the ceiling (a release out of range is no
// hand-back), and the next tenure's epoch is base + revision + 1 (P2),
// above every epoch before, whatever the record said. A follower restarted
// right after it, which knows nothing earlier, starts (the record is of
// this protocol) and follows. Then a handover goes on from there.
//
// Records of this protocol in range are forged records, out of scope
// (§5.5). The same values are among the garbage of the chaos schedule
// (garbage.go); this test checks what follows one precisely.
func TestChaosOutOfRangeEpoch(t *testing.T) {
	t.Parallel()
	for _, v := range []struct {
		name string
		o    outOfRange
	}{
		{"held by ghost at MaxInt64", outOfRange{at: atMax}},
		{"released at MaxInt64", outOfRange{at: atMax, released: true}},
		{"released at the base", outOfRange{at: atBase, released: true}},
		{"held by the leader's NodeID one above the range", outOfRange{at: aboveRange, leader: true}},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel() // each its own servers and nodes
			natstest.CheckLeaks(t)
			outOfRangeEpoch(t, v.o)
		})
	}
}

func outOfRangeEpoch(t *testing.T, o outOfRange) {
	ttl := *flagTTL
	r := setUp(t, Options{Seed: 1, Nodes: 3, LeaseTTL: ttl, LongTTLNodes: -1, ClusterID: "outofrange", Log: t.Logf})
	r.start = time.Now()
	defer func() {
		if t.Failed() {
			for _, l := range r.log {
				t.Logf("%s", l)
			}
		}
	}()

	// Only in steady state: a leader has led for a few renewals, so no
	// acquisition is in flight, and every tenure that starts after the
	// record has seen it.
	natstest.WaitFor(t, 20*time.Second, func() bool {
		ts := r.checker.Tenures()
		return r.leader() != nil && len(ts) > 0 && time.Since(ts[len(ts)-1].Start) > 3*r.opts.RenewInterval &&
			r.fence.Stats().Accepted > 0
	}, "no steady leader before the record")
	before := r.checker.Tenures()
	holder := "ghost"
	if o.leader {
		holder = r.leader().id
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sent := time.Now()
	rev, data, err := writeOutOfRange(ctx, r.js, r.bucket(), o, holder)
	if err != nil {
		t.Fatal(err)
	}
	base, firstSeq, _, err := incarnationOf(ctx, r.js, r.bucket())
	if err != nil {
		t.Fatal(err)
	}
	r.logf("record out of range at revision %d (base %d): %s", rev, base, data)

	if m := r.follower(); m != nil {
		err := m.stop()
		if err == nil {
			err = m.start()
		}
		r.logf("restart %s with no memory of earlier records: %s", m.id, errString(err))
		if err != nil {
			t.Errorf("a follower restarted after the record could not start: %v", err)
		}
	}

	first := r.awaitTenureAfter(t, sent, 10*ttl)
	want := base + int64(bucketmeta.Index(firstSeq, rev)) + 1
	if first.Epoch != want {
		t.Errorf("first tenure after the record (epoch %s at revision %d, base %d): %s at epoch %d; want base + index(revision) + 1 = %d (P2)",
			epochOf(data), rev, base, first.Instance, first.Epoch, want)
	}
	// The ceiling is the bucket's LeaseTTL (the run made it), counted from
	// first sight, after the record was sent, on this process's clock.
	if early := sent.Add(r.opts.LeaseTTL).Sub(first.Start); early > 0 {
		t.Errorf("%s led %v after the record was sent, %v before the ceiling %v: it took an unknown value early", first.Instance,
			first.Start.Sub(sent).Round(time.Millisecond), early.Round(time.Millisecond), r.opts.LeaseTTL)
	}
	if last := before[len(before)-1]; first.Instance == last.Instance && first.Start.Equal(last.Start) {
		t.Errorf("the tenure live at the record (%s, epoch %d) went on", last.Instance, last.Epoch)
	}

	// A handover from there: a release taken at once, at the next epoch.
	if l := r.leader(); l != nil {
		r.logf("StepDown %s (epoch %d): %s", l.id, first.Epoch, r.stepDown(l))
	}
	second := r.awaitTenureAfter(t, first.Start.Add(time.Nanosecond), 10*ttl)
	if second.Epoch != first.Epoch+1 {
		t.Errorf("tenure after the handover: %s at epoch %d; want %d", second.Instance, second.Epoch, first.Epoch+1)
	}

	for _, m := range r.members {
		if err, failed := m.failed(); failed {
			t.Errorf("%s stopped on its own: %v", m.id, err)
		}
	}
	r.stopAll()
	r.writers.Wait()
	for _, v := range append(r.checker.Check(true), r.fence.Violations()...) {
		t.Errorf("violation: %s", v)
	}
	t.Logf("record at revision %d: %s; then %s at epoch %d (+%v), %s at epoch %d",
		rev, data, first.Instance, first.Epoch, first.Start.Sub(sent).Round(time.Millisecond), second.Instance, second.Epoch)
}

// awaitTenureAfter waits up to limit for the first tenure that started
// after from and whose epoch is known, failing t if a node stops on its
// own meanwhile or none comes.
func (r *run) awaitTenureAfter(t *testing.T, from time.Time, limit time.Duration) Tenure {
	t.Helper()
	var found Tenure
	natstest.WaitFor(t, limit, func() bool {
		for _, m := range r.members {
			if err, failed := m.failed(); failed {
				t.Fatalf("%s stopped on its own: %v", m.id, err)
			}
		}
		for _, ten := range r.checker.Tenures() {
			if ten.Start.After(from) && !ten.Stillborn {
				found = ten
				return ten.Epoch != 0
			}
		}
		return false
	}, "no tenure with a known epoch after +%v", from.Sub(r.start).Round(time.Millisecond))
	return found
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

// epochOf is the epoch of an encoded record, for messages.
func epochOf(data []byte) string {
	l, err := wire.DecodeLease(data, 0)
	if err != nil {
		return "?"
	}
	return fmt.Sprint(l.Epoch)
}
