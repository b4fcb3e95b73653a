package cluster

// Run: Start, wait, Stop with a release, for a node whose life is a ctx
// (like client-go's leader election with ReleaseOnCancel).

import (
	"context"
	"fmt"
	"time"
)

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
