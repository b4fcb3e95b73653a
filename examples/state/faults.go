package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
)

// faults breaks the leader of the moment, in this process (see the
// package doc for what each fault is, and is not).
type faults struct {
	out    io.Writer
	nodes  []*cluster.Node
	conns  []*nats.Conn // each node's own connection
	links  []link       // each node's way to NATS; none: no pause
	killed map[int]bool
}

// leader waits until a node leads and returns its index.
func (f *faults) leader(ctx context.Context) (int, error) {
	found := -1
	err := waitUntil(ctx, func() bool {
		for i, n := range f.nodes {
			if !f.killed[i] && n.IsLeader() {
				found = i
				return true
			}
		}
		return false
	})
	if err != nil {
		return 0, fmt.Errorf("waiting for a leader: %w", err)
	}
	return found, nil
}

// stepDown hands over gracefully. Each fault takes the leader's index and
// the increments acknowledged so far.
func (f *faults) stepDown(ctx context.Context, i int, acked int64) error {
	fmt.Fprintf(f.out, "at %d acknowledged increments: %s steps down\n", acked, f.nodes[i].Config().NodeID)
	if err := f.nodes[i].StepDown(ctx); err != nil && !errors.Is(err, cluster.ErrNotLeader) {
		return err
	}
	return nil
}

// pause stalls node i's connection until another node leads.
func (f *faults) pause(ctx context.Context, i int, acked int64) error {
	id := f.nodes[i].Config().NodeID
	if len(f.links) == 0 {
		fmt.Fprintf(f.out, "at %d acknowledged increments: %s is not paused: its connection goes straight to NATS (the example's test stalls a proxy)\n", acked, id)
		return nil
	}
	fmt.Fprintf(f.out, "at %d acknowledged increments: %s is paused: its connection stalled\n", acked, id)
	f.links[i].Stall()
	defer f.links[i].Restore()
	start := time.Now()
	succ := -1
	err := waitUntil(ctx, func() bool {
		for j, n := range f.nodes {
			if j != i && !f.killed[j] && n.IsLeader() {
				succ = j
				return true
			}
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("waiting for a leader while %s is paused: %w", id, err)
	}
	fmt.Fprintf(f.out, "%s leads %v later; %s's connection delivers what it held\n",
		f.nodes[succ].Config().NodeID, time.Since(start).Round(time.Millisecond), id)
	return nil
}

// kill closes node i's connection: no Stop, no release. It returns once
// another node leads, a LeaseTTL later: the increments may all be
// acknowledged by now, and the run would otherwise end before anyone took
// over.
func (f *faults) kill(ctx context.Context, i int, acked int64) error {
	fmt.Fprintf(f.out, "at %d acknowledged increments: %s is killed: its connection closed, no release\n", acked, f.nodes[i].Config().NodeID)
	f.killed[i] = true
	f.conns[i].Close()
	start := time.Now()
	succ := -1
	err := waitUntil(ctx, func() bool {
		for j, n := range f.nodes {
			if !f.killed[j] && n.IsLeader() {
				succ = j
				return true
			}
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("waiting for a leader after %s was killed: %w", f.nodes[i].Config().NodeID, err)
	}
	fmt.Fprintf(f.out, "%s leads %v after the kill\n", f.nodes[succ].Config().NodeID, time.Since(start).Round(time.Millisecond))
	return nil
}

// waitUntil polls cond until it holds or ctx ends.
func waitUntil(ctx context.Context, cond func() bool) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
