package runner

import (
	"context"
	"log/slog"
	"os"
	"syscall"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
)

// end says how a run of the command ended.
type end int

const (
	endExited  end = iota // on its own, while leading
	endLost               // stopped: leadership ended, or was about to
	endSkipped            // never started: the tenure ended first
)

// lead runs the command for tenure t and returns its exit status and how
// it ended. The command is dead when lead returns.
func (r *Runner) lead(ctx context.Context, t *tenure) (int, end) {
	w := watch{node: r.nodes[t.slot-1], ncfg: r.ncfg, grace: r.grace, signals: r.cfg.Signals, log: r.log, what: "the command"}
	if ok, sig := w.waitTimeLeft(ctx, t.ctx); sig != 0 {
		r.log.Info("signal while waiting to start the command: stopping", "signal", sig)
		return 128 + int(sig), endExited
	} else if !ok {
		return 0, endSkipped
	}
	c, err := StartChild(r.cfg.Argv, r.env(t), r.cfg.Stdio)
	if err != nil {
		r.log.Error("cannot start the command; stepping down", "err", err)
		return 127, endExited
	}
	r.log.Info("leading: command started", "epoch", t.epoch, "pid", c.Pid())
	return w.run(ctx, t.ctx, c)
}

// watch supervises one run of a command for one tenure of node.
type watch struct {
	node    *cluster.Node
	ncfg    cluster.Config // node's, with defaults
	grace   time.Duration
	signals <-chan os.Signal // passed on to the command; may be nil
	log     *slog.Logger
	// what names the command in logs: "the command" (run), "the service"
	// (the agent's), as its operator knows it.
	what string

	deadline time.Time // the tenure's deadline as last read
}

// timeLeft reads the tenure's deadline and reports whether a command
// started now would have more than its grace before it: one that would
// not is not started.
func (w *watch) timeLeft(tenure context.Context) bool {
	t, ok := w.node.Tenure()
	w.deadline = t.Deadline
	return ok && tenure.Err() == nil && time.Until(t.Deadline) > w.grace+KillLead(w.ncfg)
}

// waitTimeLeft waits until timeLeft holds, reading the deadline again as
// renewals move it: a tenure seen late (its campaign answered slowly) has
// too little left at first, and is not given up while it lasts. It
// reports false when the tenure or ctx ends first, or when a terminating
// signal comes (returned; others are dropped: no command runs yet).
func (w *watch) waitTimeLeft(ctx, tenure context.Context) (bool, syscall.Signal) {
	if w.timeLeft(tenure) {
		return true, 0
	}
	w.log.Info("the tenure's deadline is too close to start "+w.what+": waiting for a renewal to move it", "deadline_in", time.Until(w.deadline))
	poll := time.NewTicker(max(w.ncfg.RenewInterval/4, time.Millisecond))
	defer poll.Stop()
	for !w.timeLeft(tenure) {
		select {
		case <-poll.C:
		case sig := <-w.signals:
			if s, ok := terminating(sig); ok {
				return false, s
			}
		case <-tenure.Done():
			return false, 0
		case <-ctx.Done():
			return false, 0
		}
	}
	return true, 0
}

// run waits for the command to end, passing signals on, and stops it when
// the tenure ends, its deadline comes too close, or ctx ends.
func (w *watch) run(ctx, tenure context.Context, c *Child) (int, end) {
	lead := w.grace + KillLead(w.ncfg)
	timer := time.NewTimer(time.Until(w.deadline) - lead)
	defer timer.Stop()
	for {
		select {
		case <-c.Exited():
			// What it left running gets SIGTERM, then SIGKILL as on a loss.
			c.Terminate(w.killAt())
			return c.ExitCode(), endExited
		case sig := <-w.signals:
			if s, ok := sig.(syscall.Signal); ok {
				c.Signal(s)
			}
		case <-timer.C:
			t, ok := w.node.Tenure()
			if ok && time.Until(t.Deadline) > lead {
				w.deadline = t.Deadline
				timer.Reset(time.Until(t.Deadline) - lead)
				continue
			}
			if ok {
				w.deadline = t.Deadline
			}
			w.log.Warn("renewals are late: stopping "+w.what+" before the lease can pass on", "deadline_in", time.Until(w.deadline))
			c.Terminate(w.deadline.Add(-KillLead(w.ncfg)))
			return c.ExitCode(), endLost
		case <-tenure.Done():
			w.log.Warn("leadership ended: stopping " + w.what)
			c.Terminate(w.killAt())
			return c.ExitCode(), endLost
		case <-ctx.Done():
			c.Terminate(w.killAt())
			return c.ExitCode(), endLost
		}
	}
}

// killAt is when SIGKILL follows a SIGTERM sent now: after the grace, but
// never later than KillLead before the last deadline read (a tenure that
// ran out ends at it; one ended early by StepDown or Stop has its lease
// renewed until the command is gone, so the grace is all it needs).
func (w *watch) killAt() time.Time {
	at := time.Now().Add(w.grace)
	if last := w.deadline.Add(-KillLead(w.ncfg)); last.Before(at) {
		return last
	}
	return at
}
