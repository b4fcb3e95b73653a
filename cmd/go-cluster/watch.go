package main

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/wire"
	"github.com/spf13/pflag"
)

// watchCmd streams leadership changes from a KV watch on the lease.
type watchCmd struct {
	all   bool
	count int
}

func (c *watchCmd) define(fs *pflag.FlagSet) {
	fs.BoolVar(&c.all, "all", false, "also print renewals: every write of the lease")
	fs.IntVar(&c.count, "count", 0, "stop after printing `N` events, the current state included (0: until interrupted)")
}

func (c *watchCmd) run(ctx context.Context, e *env, _ []string) error {
	if c.count < 0 {
		return fmt.Errorf("%w: --count must not be negative", errUsage)
	}
	nc, kv, err := e.dialBucket(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	// The watch sends the current value (if any), then nil, then every write.
	w, err := kv.Watch(ctx, wire.LeaseKey)
	if err != nil {
		return fmt.Errorf("watch %s/%s: %w", wire.BucketName(e.opts.cluster), wire.LeaseKey, err)
	}
	defer func() { _ = w.Stop() }()
	if e.interactive {
		fmt.Fprintf(e.stderr, "watching the lease of cluster %s; Ctrl-C to stop\n", e.opts.cluster)
	}
	var prev *leaseState
	printed := 0
	emit := func(ev watchEvent) error {
		var err error
		if e.opts.json {
			err = writeJSONLine(e.stdout, ev)
		} else {
			err = renderWatchEvent(e.stdout, ev)
		}
		printed++
		return err
	}
	for c.count == 0 || printed < c.count {
		select {
		case <-ctx.Done():
			return nil // interrupted: a normal end
		case en, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("watch ended: %w", nats.ErrConnectionClosed)
			}
			if en == nil { // the initial values are done
				if prev == nil {
					absent := leaseState{State: stateAbsent}
					prev = &absent
					if err := emit(eventFor(nil, absent, e.now())); err != nil {
						return err
					}
				}
				continue
			}
			cur := fromEntry(en)
			ev, show := nextEvent(prev, cur, c.all)
			prev = &cur
			if show {
				if err := emit(ev); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// watchEvent is one line of watch.
type watchEvent struct {
	// Time is when the lease was written, by the NATS server's clock (for
	// "absent", when the watch started).
	Time time.Time `json:"time"`
	// Event is "leader" (a node won the lease), "released" (nobody leads),
	// "renewed" (with --all), "absent" (never written), "deleted" or
	// "invalid".
	Event    string `json:"event"`
	Leader   string `json:"leader,omitempty"`
	Epoch    int64  `json:"epoch,omitempty"`
	Revision uint64 `json:"revision,omitempty"`
	Previous string `json:"previous,omitempty"` // the leader before, when this one is known
	Next     string `json:"next,omitempty"`     // on "released": the successor named
	Problem  string `json:"problem,omitempty"`  // on "invalid": why
}

// Events other than the lease states.
const (
	eventLeader  = "leader"
	eventRenewed = "renewed"
)

// nextEvent says what a write of the lease means after prev (nil: the
// first value seen), and whether to print it: a change of leader, epoch or
// state always; a renewal only with all.
func nextEvent(prev *leaseState, cur leaseState, all bool) (watchEvent, bool) {
	ev := eventFor(prev, cur, cur.Written)
	if prev == nil || prev.State != cur.State {
		return ev, true
	}
	switch cur.State {
	case stateHeld:
		if prev.Lease.NodeID != cur.Lease.NodeID || prev.Lease.Epoch != cur.Lease.Epoch {
			return ev, true
		}
		ev.Event, ev.Previous = eventRenewed, ""
		return ev, all
	case stateReleased:
		return ev, prev.Lease.Epoch != cur.Lease.Epoch || prev.Lease.Next != cur.Lease.Next || all
	default:
		return ev, all
	}
}

// eventFor describes the state cur, reached from prev (nil if unknown).
func eventFor(prev *leaseState, cur leaseState, at time.Time) watchEvent {
	ev := watchEvent{Time: at, Event: cur.State, Revision: cur.Revision, Problem: cur.Problem}
	if cur.State == stateHeld {
		ev.Event = eventLeader
	}
	if cur.State == stateHeld || cur.State == stateReleased {
		ev.Leader, ev.Epoch = cur.leader(), cur.Lease.Epoch
		if cur.State == stateReleased {
			ev.Next = cur.Lease.Next
		}
	}
	if prev != nil && prev.State == stateHeld && prev.Lease.NodeID != ev.Leader {
		ev.Previous = prev.Lease.NodeID
	}
	return ev
}
