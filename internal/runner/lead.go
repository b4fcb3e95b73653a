package runner

import (
	"context"
	"syscall"
	"time"
)

// end says how a run of the command ended.
type end int

const (
	endExited  end = iota // on its own, while leading
	endLost               // stopped: leadership ended, or was about to
	endSkipped            // never started: the tenure was over, or nearly
)

// lead runs the command for tenure t and returns its exit status and how
// it ended. The command is dead when lead returns.
func (r *Runner) lead(ctx context.Context, t *tenure) (int, end) {
	deadline, ok := r.node.TenureDeadline()
	if !ok || t.ctx.Err() != nil || time.Until(deadline) <= r.grace+KillLead(r.ncfg) {
		return 0, endSkipped // it would get SIGTERM at once
	}
	c, err := StartChild(r.cfg.Argv, r.env(t), r.cfg.Stdio)
	if err != nil {
		r.log.Error("cannot start the command; stepping down", "err", err)
		return 127, endExited
	}
	r.log.Info("leading: command started", "epoch", t.epoch, "pid", c.Pid())
	w := watch{r: r, c: c, deadline: deadline}
	return w.run(ctx, t)
}

// watch supervises one run of the command.
type watch struct {
	r        *Runner
	c        *Child
	deadline time.Time // the tenure's deadline as last read
}

// run waits for the command to end, passing signals on, and stops it when
// leadership ends or its deadline comes too close.
func (w *watch) run(ctx context.Context, t *tenure) (int, end) {
	r, c := w.r, w.c
	lead := r.grace + KillLead(r.ncfg)
	timer := time.NewTimer(time.Until(w.deadline) - lead)
	defer timer.Stop()
	for {
		select {
		case <-c.Done():
			return c.ExitCode(), endExited
		case sig := <-r.cfg.Signals:
			if s, ok := sig.(syscall.Signal); ok {
				c.Signal(s)
			}
		case <-timer.C:
			d, ok := r.node.TenureDeadline()
			if ok && time.Until(d) > lead {
				w.deadline = d
				timer.Reset(time.Until(d) - lead)
				continue
			}
			if ok {
				w.deadline = d
			}
			r.log.Warn("renewals are late: stopping the command before the lease can pass on", "epoch", t.epoch, "deadline_in", time.Until(w.deadline))
			c.Terminate(w.deadline.Add(-KillLead(r.ncfg)))
			return c.ExitCode(), endLost
		case <-t.ctx.Done():
			r.log.Warn("leadership ended: stopping the command", "epoch", t.epoch)
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
	at := time.Now().Add(w.r.grace)
	if last := w.deadline.Add(-KillLead(w.r.ncfg)); last.Before(at) {
		return last
	}
	return at
}
