package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// States of the lease key.
const (
	stateHeld     = "held"     // a node holds the lease
	stateReleased = "released" // the last holder let it go; nobody leads
	stateAbsent   = "absent"   // never written: no node has won it yet
	stateDeleted  = "deleted"  // deleted or purged (by hand: the core never deletes it)
	stateInvalid  = "invalid"  // not a lease record
)

// leaseState is what the lease key says.
type leaseState struct {
	State    string
	Lease    wire.Lease
	Revision uint64
	Written  time.Time // the server's time of the write
	Problem  string    // with stateInvalid: why
}

// leader returns the holder, or "" when nobody holds the lease.
func (l leaseState) leader() string {
	if l.State == stateHeld {
		return l.Lease.NodeID
	}
	return ""
}

// fromEntry decodes a KV entry of the lease key.
func fromEntry(en jetstream.KeyValueEntry) leaseState {
	s := leaseState{Revision: en.Revision(), Written: en.Created()}
	if en.Operation() != jetstream.KeyValuePut {
		s.State = stateDeleted
		return s
	}
	l, err := wire.DecodeLease(en.Value(), en.Revision())
	if err != nil { // the nodes treat it as held by an unknown node
		s.State, s.Problem = stateInvalid, err.Error()
		return s
	}
	s.Lease = l
	if s.Lease.IsReleased() {
		s.State = stateReleased
	} else {
		s.State = stateHeld
	}
	return s
}

// readLease reads the lease key once.
func (e *env) readLease(ctx context.Context, kv jetstream.KeyValue) (leaseState, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	en, err := kv.Get(ctx, wire.LeaseKey)
	switch {
	case err == nil:
		return fromEntry(en), nil
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return leaseState{State: stateAbsent}, nil
	case errors.Is(err, jetstream.ErrKeyDeleted):
		return leaseState{State: stateDeleted}, nil
	case errors.Is(err, context.DeadlineExceeded):
		return leaseState{}, fmt.Errorf("%w: reading the lease took longer than %v", errNoAnswer, e.opts.timeout)
	default:
		return leaseState{}, fmt.Errorf("read the lease: %w", err)
	}
}
