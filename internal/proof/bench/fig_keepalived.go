package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// kaProbe is the observer's who-has interval in figure 9.
const kaProbe = 2 * time.Millisecond

// figKeepalived is figure 9: go-cluster agent side by side with
// keepalived on two "hosts" (network namespaces) and an observer on a
// bridge between them. In every run the holder of the VIP is stopped
// (SIGTERM, or SIGKILL with its link cut, as a host that dies) and the
// observer times the other host's first gratuitous ARP, while asking
// who-has VIP every 2 ms and noting which hosts answer. Root only.
func (bn *bench) figKeepalived(ctx context.Context) []row {
	const fig = "9"
	// Ctrl-C or SIGTERM ends the runs; the namespaces and daemons are
	// removed on the way out.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := kaConfig{n: bn.o.nKeepalived, adverts: bn.o.kaAdverts, ttls: bn.o.kaTTLs, probe: kaProbe,
		prefix: fmt.Sprintf("gcka-%s-%d", bn.runID, os.Getpid())}
	res, err := compareKeepalived(ctx, cfg, bn.log)
	switch {
	case errors.Is(err, errNeedsRoot), errors.Is(err, errNoKeepalived):
		return []row{skipped(fig, "keepalived", err.Error())}
	case err != nil && len(res) == 0:
		return []row{failed(fig, "keepalived", err)}
	}
	rows := kaRows(fig, res, cfg)
	if err != nil {
		rows = append(rows, failed(fig, "keepalived", err))
	}
	return rows
}

// kaRows turns the results into rows: per kind, the takeover after
// SIGTERM and after a crash, and the runs in which both hosts answered.
func kaRows(fig string, res []kaResult, cfg kaConfig) []row {
	// The graceful handover goal is against keepalived with its default
	// advert_int (1 s), when it was measured.
	var kaDefault, kaFast *kaResult
	for i := range res {
		if !res[i].kind.agent && res[i].kind.settle > 0 {
			switch {
			case res[i].kind.name == "keepalived advert_int 1s":
				kaDefault = &res[i]
			case kaFast == nil || res[i].kind.settle < kaFast.kind.settle:
				kaFast = &res[i]
			}
		}
	}
	params := func(k haKind) string {
		return fmt.Sprintf("%s; 2 namespaces on a bridge, observer probes every %v", k.params, cfg.probe)
	}
	var rows []row
	for _, r := range res {
		k := r.kind
		for _, stop := range []kaStop{stopTerm, stopCrash} {
			runs := r.of(stop)
			garps, silent := make([]time.Duration, len(runs)), make([]time.Duration, len(runs))
			both := 0
			for i, run := range runs {
				garps[i], silent[i] = run.garp, run.silent
				if run.split.Overlap() {
					both++
				}
			}
			rw := latencyRow(fig, fmt.Sprintf("%s: %s -> new holder's first GARP", k.name, stop), params(k), garps)
			if s := summarize(silent); s.n > 0 {
				rw.note = fmt.Sprintf("no host answered ARP for %s (p99 %s); both answered in %d of %d runs", ms(s.median), ms(s.p99), both, len(runs))
			} else {
				rw.note = "no runs"
			}
			m := summarize(garps).median
			switch {
			case k.agent && stop == stopTerm && kaDefault != nil:
				base := summarize(kaDefault.garps(stopTerm)).median
				rw = rw.withGoal(">= 10 x faster than keepalived's", len(runs) > 0 && ratio(base, m) >= 10)
				rw.note += fmt.Sprintf("; %.0f x keepalived advert_int 1s", ratio(base, m))
				if kaFast != nil {
					rw.note += fmt.Sprintf(", %.1f x %s", ratio(summarize(kaFast.garps(stopTerm)).median, m), kaFast.kind.name)
				}
			case k.agent && stop == stopCrash:
				rw = rw.withGoal("<= LeaseTTL + RenewInterval = "+k.bound.String(), len(runs) > 0 && summarize(garps).max <= k.bound)
			case stop == stopCrash:
				rw.note += "; VRRP master-down interval " + k.bound.String()
			}
			rows = append(rows, rw)
		}
		both, probes := 0, 0
		for _, run := range r.runs {
			probes += run.split.Probes
			if run.split.Overlap() {
				both++
			}
		}
		rows = append(rows, row{fig: fig, name: k.name + ": runs in which both hosts answered ARP", params: params(k), n: len(r.runs),
			median: fmt.Sprint(both), p99: "-", note: fmt.Sprintf("%d probes", probes)}.withGoal("none", both == 0))
		if r.err != nil {
			rows = append(rows, failed(fig, k.name, r.err))
		}
	}
	return rows
}
