package runner

import (
	"context"
	"sync"

	cluster "github.com/ozanturksever/go-cluster"
)

// hooks hand each tenure of slot's node to Run and hold the lease's
// release until the tenure's command is gone.
type hooks struct {
	r    *Runner
	slot int // 1-based
}

var _ cluster.Hooks = hooks{}

// tenure is one term as leader of one slot, as the hooks and Run share it.
type tenure struct {
	ctx   context.Context
	slot  int
	epoch int64
	dead  chan struct{} // closed once no command of this tenure runs

	mu      sync.Mutex
	taken   bool // Run took it up: OnLoseLeadership waits for dead
	dropped bool // it ended before Run took it up: Run skips it
}

// take reports whether Run may run the command for t: false once
// OnLoseLeadership has dropped it.
func (t *tenure) take() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.taken = !t.dropped
	return t.taken
}

// drop marks t ended, and reports whether Run had taken it up (then its
// command must be waited for).
func (t *tenure) drop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropped = true
	return t.taken
}

// OnBecomeLeader queues the tenure for Run, which starts the command. It
// never waits: Run may be busy with another slot's tenure.
func (h hooks) OnBecomeLeader(ctx context.Context) error {
	epoch, _ := cluster.TenureEpoch(ctx)
	t := &tenure{ctx: ctx, slot: h.slot, epoch: epoch, dead: make(chan struct{})}
	h.r.mu.Lock()
	h.r.current[h.slot] = t
	h.r.pending = append(h.r.pending, t)
	h.r.mu.Unlock()
	select {
	case h.r.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
	return nil
}

// OnLoseLeadership returns once the tenure's command has exited: on
// StepDown and Stop the lease is released only after it returns. A tenure
// Run has not taken up (it is busy in another slot, or has not come to
// it yet) is dropped at once.
func (h hooks) OnLoseLeadership(ctx context.Context) error {
	t := h.r.takeCurrent(h.slot)
	if t == nil || !t.drop() {
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

// nextTenure takes the oldest queued tenure still to run, nil if none.
func (r *Runner) nextTenure() *tenure {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.pending) > 0 {
		t := r.pending[0]
		r.pending = r.pending[1:]
		if t.take() {
			return t
		}
	}
	return nil
}

// takeCurrent returns the tenure of slot OnLoseLeadership waits for, and
// forgets it.
func (r *Runner) takeCurrent(slot int) *tenure {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.current[slot]
	delete(r.current, slot)
	return t
}
