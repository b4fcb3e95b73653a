package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// skipOrFail skips the test with msg, except in CI (CI set in the
// environment), where it must not be skipped silently: it fails instead.
func skipOrFail(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI=%q is set: this must not be skipped in CI)", msg, os.Getenv("CI"))
	}
	t.Skip(msg)
}

// TestKeepalivedComparison runs figure 9 once per kind (keepalived with
// advert_int 1s, the agent with LeaseTTL 1s) and each way of stopping
// the holder: the observer must see the new holder's GARP every time, and
// the agent's hosts must never both answer ARP. It asserts no timings.
func TestKeepalivedComparison(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFail(t, "bench: this test needs root (network namespaces, raw sockets); run it as root: sudo -E go test ./internal/proof/bench/")
	}
	if _, err := exec.LookPath("keepalived"); err != nil {
		skipOrFail(t, "bench: this test needs keepalived (apt-get install keepalived)")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("gckat-%d", os.Getpid())
	// advert_int 1s, keepalived's default. The test asserts no timings;
	// BENCHMARKS.md measures both. (CI saw "no one holder of the VIP and
	// a standby" at 100ms and at 1s. It was read first as keepalived
	// starved of adverts; the race of its notify scripts, which hakinds.go
	// now avoids, fits it better.)
	cfg := kaConfig{n: 1, adverts: []time.Duration{time.Second}, ttls: []time.Duration{time.Second},
		probe: kaProbe, prefix: prefix}
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	res, err := compareKeepalived(ctx, cfg, log)
	if err != nil {
		t.Fatalf("comparison: %v", err)
	}
	if len(res) != 2 || res[0].kind.agent || !res[1].kind.agent {
		t.Fatalf("results %v, want keepalived's then the agent's", res)
	}
	for _, r := range res {
		if r.err != nil {
			t.Errorf("%s: %v", r.kind.name, r.err)
			continue
		}
		for _, stop := range []kaStop{stopTerm, stopCrash} {
			runs := r.of(stop)
			if len(runs) != 1 {
				t.Errorf("%s, %s: %d runs, want 1", r.kind.name, stop, len(runs))
				continue
			}
			run := runs[0]
			t.Logf("%s, %s: first GARP after %v, no answer for %v, %d probes", r.kind.name, stop, run.garp, run.silent, run.split.Probes)
			if run.garp <= 0 {
				t.Errorf("%s, %s: no GARP from the new holder after the signal (%v)", r.kind.name, stop, run.garp)
			}
			if run.split.Probes == 0 || run.silent <= 0 {
				t.Errorf("%s, %s: the probes did not see the VIP move (%d probes, silence %v)", r.kind.name, stop, run.split.Probes, run.silent)
			}
			if r.kind.agent && run.split.Overlap() {
				t.Errorf("%s, %s: both hosts answered ARP: %+v", r.kind.name, stop, run.split)
			}
		}
	}
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), prefix) {
		t.Errorf("namespaces left behind: %s", out)
	}
}
