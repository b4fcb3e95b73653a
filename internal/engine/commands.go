package engine

// The engine's calls that reach the machine: each a command to the loop,
// answered on its channels.

import (
	"context"
	"fmt"
	"maps"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// StepDown ends this node's tenure and releases the lease, naming to (a
// NodeID, or "" for anyone) as the successor. Called from a hook it
// returns wire.ErrCalledFromHook once the step-down has begun: the
// release waits for OnLoseLeadership, which runs after that hook.
func (e *Engine) StepDown(ctx context.Context, to string) error {
	reply := make(chan error, 1)
	inHook := inHook()
	d, err := e.send(ctx, command{Kind: cmdStepDown, Reply: reply, To: to, Async: inHook})
	if err != nil {
		return err
	}
	select {
	case err := <-reply:
		switch {
		case err != nil:
			return err
		case inHook:
			return wire.ErrCalledFromHook
		}
		return nil
	case <-d.Exited():
		return wire.ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Validate proves the tenure by a renewal sent after the call and returns
// its epoch (P7).
func (e *Engine) Validate(ctx context.Context) (int64, error) {
	reply, epoch := make(chan error, 1), make(chan int64, 1)
	if _, err := e.send(ctx, command{Kind: cmdValidate, Reply: reply, Epoch: epoch}); err != nil {
		return 0, err
	}
	select {
	case ep := <-epoch:
		return ep, nil
	case err := <-reply:
		return 0, err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// SetMetadata has the node publish md (checked by the caller) from now
// on: the leader with a renewal made at once.
func (e *Engine) SetMetadata(ctx context.Context, md map[string]string) error {
	md = maps.Clone(md)
	reply := make(chan error, 1)
	if _, err := e.send(ctx, command{Kind: cmdSetMetadata, Reply: reply, Metadata: md}); err != nil {
		return err
	}
	select {
	case err := <-reply:
		if err != nil {
			return err
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	e.view.SetMetadata(md)
	return nil
}

// SetPriority sets the node's priority from now on (checked by the
// caller), before Start too.
func (e *Engine) SetPriority(p int) {
	e.priority.Store(int64(p))
	e.mu.Lock()
	d := e.d
	e.mu.Unlock()
	if d != nil { // a driver made before the Store reads it; a later one, here
		_ = d.Send(context.Background(), command{Kind: cmdSetPriority, Priority: p, Reply: make(chan error, 1)})
	}
}

// send hands a command to the driver and returns it.
func (e *Engine) send(ctx context.Context, c command) (*driver, error) {
	e.mu.Lock()
	started, d := e.started, e.d
	e.mu.Unlock()
	if !started {
		return nil, wire.ErrNotStarted
	}
	if d == nil {
		return nil, wire.ErrStopped
	}
	if !e.campaigns() && c.Kind != cmdStop {
		return nil, fmt.Errorf("%w: an observer never leads", wire.ErrNotLeader)
	}
	return d, d.Send(ctx, c)
}
