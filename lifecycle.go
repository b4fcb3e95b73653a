package cluster

// The Node's lifecycle: Start and Stop, carried out by the engine, and
// Run, which ties them to a ctx (like client-go's leader election with
// ReleaseOnCancel).

import (
	"context"
	"fmt"
	"time"
)

// Start connects to NATS (unless Config.Conn is set), opens the bucket
// "cluster-<ClusterID>" (creating it when absent), starts watching the
// lease and begins to campaign. ctx bounds start-up only; the Node runs
// until Stop or a permanent error (see Done and Err); Run ties it to a
// ctx instead. A Stop during Start ends it: Start then returns an error
// wrapping ErrStopped. A Node starts once: a second Start returns an error
// wrapping ErrAlreadyStarted, and a Start after the node stopped (by Stop,
// a failed Start or a permanent error) one wrapping both ErrStopped and
// ErrAlreadyStarted, and the cause if it stopped on its own. A stopped
// Node is not restarted: make a new one.
func (n *Node) Start(ctx context.Context) error {
	if n.eng == nil { // a Node not made by NewNode
		return fmt.Errorf("start: %w: make the Node with NewNode or NewObserver", ErrInvalidConfig)
	}
	return n.eng.Start(ctx)
}

// Stop leaves the cluster. On the leader it cancels the tenure, runs
// OnLoseLeadership (bounded by Config.DrainTimeout from when it begins)
// while still renewing, then releases the lease so that a follower takes
// over at once. When Stop returns nil no hook is running or will run, and
// the Node's goroutines have ended; every Stop, the first or a later one,
// keeps that promise. If ctx ends first, Stop abandons the graceful path
// and returns ctx's error; a hook still running is told through its ctx
// and left to finish on its own (Done closes when it has). Stop returns by
// its ctx even when NATS does not answer.
//
// Called from a hook, this Node's or another's, Stop cannot wait for hooks
// (it would wait for the one that called it, or for one waiting for it):
// it starts the stop and returns at once with an error wrapping
// ErrCalledFromHook; the node stops after the hook returns.
func (n *Node) Stop(ctx context.Context) error {
	if n.eng == nil { // a Node not made by NewNode never started
		return ErrNotStarted
	}
	return n.eng.Stop(ctx)
}

// Run starts the node, blocks while it runs, and stops it when ctx ends,
// releasing the lease if it leads, so that a follower takes over at once
// rather than after LeaseTTL (like client-go's ReleaseOnCancel). ctx is
// the node's whole life here, unlike Start's, which bounds the start only.
//
// It returns nil when the node stopped cleanly: ctx ended and the Stop
// completed, ctx ended while the node was still starting, or another
// goroutine called Stop. It returns the node's error (Err, wrapped) when
// the node stopped on its own, Start's error when the start failed, and an
// error wrapping context.DeadlineExceeded when the Stop did not complete
// in time.
//
// The Stop after ctx ends is given DrainTimeout + 2×RequestTimeout: the
// drain (OnLoseLeadership), a renewal still in flight, and the release.
// Past that it is abandoned as Stop's ctx describes: hooks are told
// through their ctx and Done closes when they return; the lease, if not
// released, expires after LeaseTTL.
func (n *Node) Run(ctx context.Context) error {
	if err := n.Start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // ended while starting: nothing to stop
		}
		return fmt.Errorf("run: %w", err)
	}
	select {
	case <-n.Done():
		if err := n.Err(); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), n.runStopTimeout())
	defer cancel()
	if err := n.Stop(sctx); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	return nil
}

// runStopTimeout bounds the Stop that Run makes when its ctx ends.
func (n *Node) runStopTimeout() time.Duration {
	return n.cfg.DrainTimeout + 2*n.cfg.RequestTimeout
}
