package cluster

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/ozanturksever/go-cluster/internal/engine"
)

// Hooks is how a Node tells the application about leadership.
//
// A Node calls its hooks one at a time, in order, on a goroutine of its own:
// never while holding a lock, never on the lease-renewal path, never on a NATS
// callback goroutine. A slow hook delays later hooks but never costs the
// lease. OnBecomeLeader and OnLoseLeadership strictly alternate, starting with
// OnBecomeLeader. A returned error or a panic is logged and counted; it does
// not change the node's state, unless Config.OnBecomeLeaderError is
// LeaderHookErrorStepsDown: then a failed OnBecomeLeader steps the node down.
type Hooks interface {
	// OnBecomeLeader is called when this node acquires the lease. ctx is the
	// tenure: it is cancelled the moment leadership ends (lease deadline,
	// takeover, StepDown, Stop), before OnLoseLeadership is called. Work the
	// leader starts should stop when ctx is done. TenureEpoch(ctx) is the
	// tenure's epoch, the token to fence its writes with.
	OnBecomeLeader(ctx context.Context) error

	// OnLoseLeadership is called after the tenure ends. On StepDown and Stop
	// the lease is released only after this returns (bounded by
	// Config.DrainTimeout), so the application can drain before a successor
	// starts. When the lease deadline passes without a renewal it is queued
	// at that moment, even while the node is still waiting on NATS, so it
	// starts before any other node can win the lease (unless an earlier
	// hook is still running); after a takeover it is called as soon as the
	// node learns of it.
	OnLoseLeadership(ctx context.Context) error

	// OnLeaderChange is called whenever the known leader changes; nodeID is
	// empty when nobody holds the lease (released, or expired on this node's
	// clock). When this node becomes leader it is called after
	// OnBecomeLeader; when it loses leadership, after OnLoseLeadership.
	OnLeaderChange(ctx context.Context, nodeID string) error
}

// TenureEpoch returns the epoch of the tenure whose ctx is ctx (the ctx
// given to OnBecomeLeader, or one derived from it), and false for any
// other ctx. It is the fencing token of that tenure, fixed for its whole
// life: unlike Node.Epoch, which tells the epoch the node knows now, it
// cannot be another tenure's even when the hook runs late.
func TenureEpoch(ctx context.Context) (int64, bool) {
	return engine.EpochOf(ctx)
}

// NoOpHooks implements Hooks and does nothing. Embed it to implement only
// some of the methods.
type NoOpHooks struct{}

// OnBecomeLeader does nothing.
func (NoOpHooks) OnBecomeLeader(context.Context) error { return nil }

// OnLoseLeadership does nothing.
func (NoOpHooks) OnLoseLeadership(context.Context) error { return nil }

// OnLeaderChange does nothing.
func (NoOpHooks) OnLeaderChange(context.Context, string) error { return nil }

// HookFuncs adapts plain functions to Hooks. A nil field does nothing.
type HookFuncs struct {
	BecomeLeader   func(ctx context.Context) error
	LoseLeadership func(ctx context.Context) error
	LeaderChange   func(ctx context.Context, nodeID string) error
}

// OnBecomeLeader calls f.BecomeLeader if set.
func (f HookFuncs) OnBecomeLeader(ctx context.Context) error {
	if f.BecomeLeader == nil {
		return nil
	}
	return f.BecomeLeader(ctx)
}

// OnLoseLeadership calls f.LoseLeadership if set.
func (f HookFuncs) OnLoseLeadership(ctx context.Context) error {
	if f.LoseLeadership == nil {
		return nil
	}
	return f.LoseLeadership(ctx)
}

// OnLeaderChange calls f.LeaderChange if set.
func (f HookFuncs) OnLeaderChange(ctx context.Context, nodeID string) error {
	if f.LeaderChange == nil {
		return nil
	}
	return f.LeaderChange(ctx, nodeID)
}

// ComposeHooks returns Hooks that call each of hooks in turn, so that an
// application's hooks and add-ons (health, vip) share one Node.
//
// Order is that of a stack, as with defer:
//   - OnBecomeLeader and OnLeaderChange call hooks first to last;
//   - OnLoseLeadership calls them last to first.
//
// So ComposeHooks(app, vipHooks) starts the application before the VIP
// arrives, and removes the VIP before the application stops. Every hook is
// called even when an earlier one fails or panics; the errors (a panic
// becomes an error) are joined. Nil entries are skipped; an entry that is
// itself composed is taken apart, so an error names its hook once, by its
// index in the flattened list.
func ComposeHooks(hooks ...Hooks) Hooks {
	list := make([]Hooks, 0, len(hooks))
	for _, h := range hooks {
		switch h := h.(type) {
		case nil:
		case composedHooks:
			// A stack within a stack is the same stack flattened; flat,
			// an error names its hook once, not once per level.
			list = append(list, h...)
		default:
			list = append(list, h)
		}
	}
	return composedHooks(list)
}

type composedHooks []Hooks

func (c composedHooks) OnBecomeLeader(ctx context.Context) error {
	var errs []error
	for i, h := range c {
		errs = append(errs, callHook(i, func() error { return h.OnBecomeLeader(ctx) }))
	}
	return errors.Join(errs...)
}

func (c composedHooks) OnLoseLeadership(ctx context.Context) error {
	var errs []error
	for i := len(c) - 1; i >= 0; i-- {
		h := c[i]
		errs = append(errs, callHook(i, func() error { return h.OnLoseLeadership(ctx) }))
	}
	return errors.Join(errs...)
}

func (c composedHooks) OnLeaderChange(ctx context.Context, nodeID string) error {
	var errs []error
	for i, h := range c {
		errs = append(errs, callHook(i, func() error { return h.OnLeaderChange(ctx, nodeID) }))
	}
	return errors.Join(errs...)
}

// callHook runs fn and turns a panic into an error naming the hook's index.
func callHook(index int, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("hook %d panicked: %v", index, r)
		}
	}()
	if e := fn(); e != nil {
		return fmt.Errorf("hook %d: %w", index, e)
	}
	return nil
}

// checkHooks refuses hooks that are a nil pointer (or map, func, ...) of a
// concrete type: not nil as an interface, so NewNode would call their
// methods, which would fail at the first election (every call a panic the
// dispatcher turns into an error). Pass nil, or NoOpHooks, for no hooks.
// The entries of ComposeHooks are checked one by one.
func checkHooks(h Hooks) error {
	if h == nil {
		return nil
	}
	if list, ok := h.(composedHooks); ok {
		var errs []error
		for _, e := range list {
			errs = append(errs, checkHooks(e))
		}
		return errors.Join(errs...)
	}
	v := reflect.ValueOf(h)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan, reflect.Slice, reflect.Interface:
		if v.IsNil() {
			return fmt.Errorf("%w: hooks: a nil %T, whose methods would fail at the first election (pass nil for no hooks)", ErrInvalidConfig, h)
		}
	}
	return nil
}

// LeaderHookPolicy says what a node does when its OnBecomeLeader returns
// an error (Config.OnBecomeLeaderError); it prints as its name.
type LeaderHookPolicy string

const (
	// LeaderHookErrorLogged is the default (also when the field is left
	// empty), as the specification has it: the error is logged and
	// counted (Metrics.ObserveHook), and the node goes on leading. For
	// leader work that retries on its own.
	LeaderHookErrorLogged LeaderHookPolicy = "logged"
	// LeaderHookErrorStepsDown steps the node down, as StepDown does
	// (OnLoseLeadership, release, Cooldown), so that another node leads:
	// for leader work that can fail to start (a port taken, a disk not
	// mounted) where another host may do better. Only the tenure whose
	// hook failed is ended; a node alone in its cluster leads again after
	// its Cooldown.
	LeaderHookErrorStepsDown LeaderHookPolicy = "steps-down"
)

func (p LeaderHookPolicy) validate() error {
	if p != "" && p != LeaderHookErrorLogged && p != LeaderHookErrorStepsDown {
		return fmt.Errorf("%w: OnBecomeLeaderError is %q, not %q or %q", ErrInvalidConfig, string(p), LeaderHookErrorLogged, LeaderHookErrorStepsDown)
	}
	return nil
}
