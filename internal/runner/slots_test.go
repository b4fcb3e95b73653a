package runner

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

func TestSlotClusterID(t *testing.T) {
	for k, want := range map[int]string{0: "jobs", 1: "jobs", 2: "jobs-slot-2", 12: "jobs-slot-12"} {
		if got := SlotClusterID("jobs", k); got != want {
			t.Errorf("SlotClusterID(jobs, %d) = %q, want %q", k, got, want)
		}
		if err := wire.CheckIdentifier("ClusterID", SlotClusterID("jobs", k)); err != nil {
			t.Errorf("slot %d: %v", k, err)
		}
	}
}

// TestLeadTimeout: a Runner that does not lead within LeadTimeout returns
// ErrLeadTimeout without running its command; one runs in each of two
// slots meanwhile, and a third finds both taken.
func TestLeadTimeout(t *testing.T) {
	// Runs alone: an upper bound on time (ErrLeadTimeout once LeadTimeout has passed).
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	dir := t.TempDir()
	slotRunner := func(id string, timeout time.Duration) *Runner {
		r, err := New(Config{
			Node:  cluster.Config{ClusterID: "timeout", NodeID: id, NATSURLs: []string{srv.URL()}, LeaseTTL: time.Second},
			Argv:  []string{"sh", "-c", `touch "$DIR/$GO_CLUSTER_NODE.$GO_CLUSTER_SLOT"; exec sleep 30`},
			Env:   []string{"DIR=" + dir},
			Slots: 2, LeadTimeout: timeout,
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slotsOf := func(id string) []string { // the slots id's command ran in
		m, _ := filepath.Glob(filepath.Join(dir, id+".*"))
		for i := range m {
			m[i] = filepath.Ext(m[i])
		}
		return m
	}
	ran := func(id string) bool { return len(slotsOf(id)) > 0 }
	a, b := runAsync(ctx, slotRunner("a", 0)), runAsync(ctx, slotRunner("b", 0))
	natstest.WaitFor(t, 10*time.Second, func() bool { return ran("a") && ran("b") }, "a and b do not both run")
	if sa, sb := slotsOf("a"), slotsOf("b"); len(sa) != 1 || len(sb) != 1 || sa[0] == sb[0] {
		t.Fatalf("a ran in slots %q, b in %q: want one each, not the same", sa, sb)
	}

	code, err := slotRunner("c", 500*time.Millisecond).Run(context.Background())
	if !errors.Is(err, ErrLeadTimeout) || code != 1 {
		t.Fatalf("Run = %d, %v; want 1, ErrLeadTimeout", code, err)
	}
	if ran("c") {
		t.Fatal("c's command ran, though both slots were taken")
	}
	cancel()
	for _, ch := range []<-chan result{a, b} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after its ctx ended")
		}
	}
}
