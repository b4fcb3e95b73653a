package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ozanturksever/go-cluster/internal/proof/arplab"
)

// kaConfig is what figure 9 compares.
type kaConfig struct {
	n       int             // runs per kind and way of stopping the holder
	adverts []time.Duration // keepalived's advert_int, one kind each
	ttls    []time.Duration // the agent's LeaseTTL, one kind each
	probe   time.Duration   // the observer's who-has interval
	prefix  string          // namespace names and the agent's ClusterIDs start with it
}

// kaStop is how the holder is stopped in a run.
type kaStop int

const (
	stopTerm  kaStop = iota // SIGTERM to the daemon
	stopCrash               // SIGKILL to its process group and its link cut
)

func (s kaStop) String() string {
	if s == stopTerm {
		return "SIGTERM"
	}
	return "SIGKILL + link down"
}

// kaRun is one run: the holder stopped, the other host's first GARP.
type kaRun struct {
	stop   kaStop
	garp   time.Duration // from the signal to the new holder's first GARP
	silent time.Duration // the longest time no host answered the probes around the takeover
	split  arplab.SplitBrain
}

// kaResult is what one kind measured.
type kaResult struct {
	kind haKind
	runs []kaRun
	err  error // the kind stopped early
}

// of returns the runs stopped by s.
func (r kaResult) of(s kaStop) []kaRun {
	var out []kaRun
	for _, run := range r.runs {
		if run.stop == s {
			out = append(out, run)
		}
	}
	return out
}

// garps returns the takeover times of the runs stopped by s.
func (r kaResult) garps(s kaStop) []time.Duration {
	var out []time.Duration
	for _, run := range r.of(s) {
		out = append(out, run.garp)
	}
	return out
}

// errNeedsRoot and errNoKeepalived say why figure 9 cannot run here.
var (
	errNeedsRoot    = errors.New("needs root (network namespaces, raw sockets)")
	errNoKeepalived = errors.New("keepalived is not installed (apt-get install keepalived)")
)

// compareKeepalived runs the comparison: every kind of cfg on the same
// network, one after the other. Everything it starts is stopped and
// removed before it returns, also on error or when ctx ends.
func compareKeepalived(ctx context.Context, cfg kaConfig, log *slog.Logger) ([]kaResult, error) {
	if os.Geteuid() != 0 {
		return nil, errNeedsRoot
	}
	if len(cfg.adverts) > 0 {
		if _, err := exec.LookPath("keepalived"); err != nil {
			return nil, errNoKeepalived
		}
	}
	dir, err := os.MkdirTemp("", "go-cluster-bench-ka-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	var kinds []haKind
	for _, a := range cfg.adverts {
		kinds = append(kinds, keepalivedKind(dir, a))
	}
	if len(cfg.ttls) > 0 {
		log.Info("keepalived: building go-cluster and nats-server")
		goCluster, natsBin, err := buildBinaries(ctx, dir)
		if err != nil {
			return nil, err
		}
		ns, err := startNATSProc(ctx, natsBin, dir)
		if err != nil {
			return nil, err
		}
		defer ns.stop()
		for i, ttl := range cfg.ttls {
			kinds = append(kinds, agentKind(dir, goCluster, ns.url, fmt.Sprintf("%s-%d", cfg.prefix, i), ttl))
		}
	}

	l, err := arplab.New(cfg.prefix)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	w, err := arplab.WatchARP(arplab.NSPath(l.ObserverNS), arplab.Bridge, netip.MustParseAddr(arplab.VIP), cfg.probe)
	if err != nil {
		return nil, err
	}
	defer w.Close()

	var out []kaResult
	for _, k := range kinds {
		log.Info("keepalived: kind", "name", k.name, "runs", 2*cfg.n)
		res := kaResult{kind: k}
		res.runs, res.err = runKind(ctx, l, w, k, cfg.n, log)
		out = append(out, res)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

// kaHosts are the daemons of a kind, one per host, and how many have been
// started (for unique file names).
type kaHosts struct {
	l     *arplab.Lab
	k     haKind
	procs map[*arplab.Host]*haProc
	seq   int
}

func (hs *kaHosts) start(h *arplab.Host) error {
	hs.seq++
	p, err := hs.k.start(h, hs.seq)
	if err != nil {
		return err
	}
	hs.procs[h] = p
	return nil
}

// close kills the daemons and leaves the hosts up without the VIP, for
// the next kind.
func (hs *kaHosts) close() {
	for h, p := range hs.procs {
		p.kill()
		_ = h.Revive()
	}
}

// describe says what each host is doing, for a wait that timed out: whether
// it holds the VIP, whether its daemon runs, the states in its state file
// (keepalived's), and the daemon's state changes and last lines of output.
func (hs *kaHosts) describe() string {
	var out []string
	for _, h := range hs.l.Hosts {
		held, err := h.HoldsVIP()
		d := fmt.Sprintf("host %s: VIP %v", h.ID, held)
		if err != nil {
			d += fmt.Sprintf(" (%v)", err)
		}
		p := hs.procs[h]
		if p == nil {
			out = append(out, d+", no daemon")
			continue
		}
		d += fmt.Sprintf(", running %v", p.running())
		if b, err := os.ReadFile(strings.TrimSuffix(p.log, ".log") + ".state"); err == nil {
			d += fmt.Sprintf(", states %q", strings.Fields(string(b)))
		}
		b, _ := os.ReadFile(p.log)
		var changes []string
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "Entering") || strings.Contains(line, "advert") {
				changes = append(changes, line)
			}
		}
		if len(changes) > 0 {
			d += ", state changes: " + lastLines([]byte(strings.Join(changes, "\n")), 10)
		}
		out = append(out, d+", last output: "+lastLines(b, 5))
	}
	return strings.Join(out, "; ")
}

// runKind starts the kind's daemons on both hosts and stops the holder n
// times with SIGTERM, then n times with a crash.
func runKind(ctx context.Context, l *arplab.Lab, w *arplab.Watch, k haKind, n int, log *slog.Logger) ([]kaRun, error) {
	hs := &kaHosts{l: l, k: k, procs: map[*arplab.Host]*haProc{}}
	defer hs.close()
	for _, h := range l.Hosts {
		if err := hs.start(h); err != nil {
			return nil, err
		}
	}
	var runs []kaRun
	for _, stop := range []kaStop{stopTerm, stopCrash} {
		for i := range n {
			r, err := hs.run(ctx, w, stop)
			if err != nil {
				return runs, fmt.Errorf("%s, %s, run %d: %w", k.name, stop, i+1, err)
			}
			log.Info("keepalived: run", "kind", k.name, "stop", stop.String(), "i", i+1, "garp", r.garp, "silent", r.silent, "both", r.split.Both, "back_again", r.split.BackAgain)
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// run waits for a steady pair (one holder answering ARP, one standby),
// stops the holder, measures until the other's first GARP, brings the
// stopped host back as the standby and then checks the whole window, from
// just before the signal, for a moment both answered.
func (hs *kaHosts) run(ctx context.Context, w *arplab.Watch, stop kaStop) (kaRun, error) {
	long := max(30*time.Second, 10*hs.k.settle)
	var holder, standby *arplab.Host
	err := waitUntil(ctx, long, 10*time.Millisecond, "one holder of the VIP and a standby", func() (bool, error) {
		h, err := hs.l.Holder()
		if err != nil || h == nil {
			return false, err
		}
		holder, standby = h, hs.l.Other(h)
		return hs.k.following(standby, hs.procs[standby]), nil
	})
	if err != nil {
		return kaRun{}, fmt.Errorf("%w; %s", err, hs.describe())
	}
	since := time.Now()
	err = waitUntil(ctx, 5*time.Second, time.Millisecond, "the holder answering ARP", func() (bool, error) {
		return w.Answered(holder.MAC, since)
	})
	if err != nil {
		return kaRun{}, err
	}

	// Each run's restart and settle take about as long as the last one's,
	// which would stop the holder at the same point of its heartbeat every
	// time: a random wait spreads the stops over the cycle.
	select {
	case <-ctx.Done():
		return kaRun{}, ctx.Err()
	case <-time.After(rand.N(hs.k.cycle)):
	}
	t0 := time.Now()
	if stop == stopTerm {
		err = hs.procs[holder].terminate()
	} else {
		err = hs.procs[holder].crash()
		if err == nil {
			err = holder.Cut()
		}
	}
	if err != nil {
		return kaRun{}, err
	}
	var garpAt time.Time
	err = waitUntil(ctx, long, time.Millisecond, "a GARP from the new holder", func() (bool, error) {
		at, ok, err := w.FirstGARP(standby.MAC, t0)
		garpAt = at
		return ok, err
	})
	if err != nil {
		return kaRun{}, err
	}

	if err := hs.procs[holder].waitExit(long); err != nil {
		return kaRun{}, err
	}
	if stop == stopCrash {
		if err := holder.Revive(); err != nil {
			return kaRun{}, err
		}
	}
	if err := hs.start(holder); err != nil {
		return kaRun{}, err
	}
	err = waitUntil(ctx, long, 10*time.Millisecond, "the restarted daemon following", func() (bool, error) {
		return hs.k.following(holder, hs.procs[holder]), nil
	})
	if err != nil {
		return kaRun{}, fmt.Errorf("%w; %s", err, hs.describe())
	}
	// The window stays open for as long as a standby that had missed the
	// holder would take to claim the VIP.
	select {
	case <-ctx.Done():
		return kaRun{}, ctx.Err()
	case <-time.After(hs.k.settle):
	}
	end := time.Now()
	split := w.SplitBrain(since, end)
	w.Forget(end)
	return kaRun{stop: stop, garp: garpAt.Sub(t0), silent: split.Silent, split: split}, nil
}
