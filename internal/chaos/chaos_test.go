package chaos

import (
	"encoding/json"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

var (
	flagDuration = flag.Duration("chaos.duration", 0, "how long to inject faults (default 20s, or $CHAOS_DURATION)")
	flagSeed     = flag.Uint64("chaos.seed", 0, "schedule seed (default 1, or $CHAOS_SEED; 0 with -chaos.random picks one)")
	flagRandom   = flag.Bool("chaos.random", false, "pick a random seed (printed) instead of the default")
	flagNodes    = flag.Int("chaos.nodes", 5, "number of nodes")
	flagTTL      = flag.Duration("chaos.ttl", time.Second, "LeaseTTL of the nodes")
	flagKinds    = flag.String("chaos.faults", "", "comma-separated fault kinds (default all but quorum-loss)")
	flagReport   = flag.String("chaos.report", "", "write the report as JSON to this file")
)

// TestChaos runs the nodes under a seeded schedule of faults and fails on
// any invariant violation or any node that stopped on its own. In the
// normal test suite it is a short run with seed 1; a long run:
//
//	go test ./internal/chaos -run '^TestChaos$' -chaos.duration=10m -chaos.seed=42 -v -timeout 30m
func TestChaos(t *testing.T) {
	natstest.CheckLeaks(t)
	opts := Options{Duration: 20 * time.Second, Seed: 1, Nodes: *flagNodes, LeaseTTL: *flagTTL, Log: t.Logf}
	if d, err := time.ParseDuration(os.Getenv("CHAOS_DURATION")); err == nil {
		opts.Duration = d
	}
	if s, err := strconv.ParseUint(os.Getenv("CHAOS_SEED"), 10, 64); err == nil {
		opts.Seed = s
	}
	if *flagDuration > 0 {
		opts.Duration = *flagDuration
	}
	if *flagSeed != 0 {
		opts.Seed = *flagSeed
	}
	if *flagRandom {
		opts.Seed = 0
	}
	if *flagKinds != "" {
		for _, k := range strings.Split(*flagKinds, ",") {
			opts.Kinds = append(opts.Kinds, FaultKind(strings.TrimSpace(k)))
		}
	}
	if testing.Short() && opts.Duration > 10*time.Second {
		opts.Duration = 10 * time.Second
	}
	rep := Run(t, opts)
	t.Logf("\n%s", rep)
	t.Logf("reproduce: go test ./internal/chaos -run '^TestChaos$' -chaos.seed=%d -chaos.duration=%v -v", rep.Seed, opts.Duration)
	if *flagReport != "" {
		data, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*flagReport, data, 0o644); err != nil {
			t.Errorf("write report: %v", err)
		}
	}
	for _, v := range rep.Violations {
		t.Errorf("violation: %s", v)
	}
	for _, f := range rep.NodeFailures {
		t.Errorf("node failure: %s", f)
	}
	if rep.Tenures < 2 {
		t.Errorf("only %d tenures: the schedule did not move leadership", rep.Tenures)
	}
	if rep.Fence.Accepted == 0 {
		t.Error("no fenced write was accepted")
	}
}
