package runner

import (
	"context"

	cluster "github.com/ozanturksever/go-cluster"
)

// hooks hand each tenure to Run and hold the lease's release until the
// tenure's command is gone.
type hooks struct{ r *Runner }

var _ cluster.Hooks = hooks{}

// OnBecomeLeader passes the tenure to Run, which starts the command.
func (h hooks) OnBecomeLeader(ctx context.Context) error {
	epoch, _ := cluster.TenureEpoch(ctx)
	t := &tenure{ctx: ctx, epoch: epoch, dead: make(chan struct{})}
	h.r.setCurrent(t)
	select {
	case h.r.tenures <- t:
	case <-h.r.quit:
		close(t.dead)
	}
	return nil
}

// OnLoseLeadership returns once the tenure's command has exited: on
// StepDown and Stop the lease is released only after it returns.
func (h hooks) OnLoseLeadership(ctx context.Context) error {
	t := h.r.takeCurrent()
	if t == nil {
		return nil
	}
	select {
	case <-t.dead:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// OnLeaderChange does nothing.
func (hooks) OnLeaderChange(context.Context, string) error { return nil }

// setCurrent records the tenure OnLoseLeadership will wait for.
func (r *Runner) setCurrent(t *tenure) {
	r.mu.Lock()
	r.current = t
	r.mu.Unlock()
}

// takeCurrent returns the tenure OnLoseLeadership waits for, and forgets it.
func (r *Runner) takeCurrent() *tenure {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.current
	r.current = nil
	return t
}
