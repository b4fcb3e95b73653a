package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// stepdownCmd asks the leader to step down over wire.ControlSubject.
type stepdownCmd struct {
	to    string
	force bool
	wait  bool
}

func (c *stepdownCmd) define(fs *pflag.FlagSet) {
	fs.StringVar(&c.to, "to", "", "hand over to `NODE`: for a moment after the release only it campaigns")
	fs.BoolVar(&c.force, "force", false, "send even if the node of --to does not answer status requests or reports it is not ready (a node that is not ready does not take the lease: another one leads, and stepdown exits 1)")
	fs.BoolVar(&c.wait, "wait", true, "wait, up to --timeout, for the new leader and print it")
}

// stepdownReport is the output of stepdown.
type stepdownReport struct {
	// Reply is the leader's answer (absent when AlreadyLeader).
	Reply *wire.StepDownReply `json:"reply,omitempty"`
	// AlreadyLeader: the node of --to already leads; nothing was sent.
	AlreadyLeader bool   `json:"already_leader,omitempty"`
	NewLeader     string `json:"new_leader,omitempty"` // with --wait: who leads now
	NewEpoch      int64  `json:"new_epoch,omitempty"`
}

func (c *stepdownCmd) run(ctx context.Context, e *env, _ []string) error {
	if c.to != "" {
		if err := wire.CheckNodeID("--to", c.to); err != nil {
			return badIdentifier(err)
		}
	}
	nc, kv, err := e.dialBucket(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	lease, err := e.readLease(ctx, kv)
	if err != nil {
		return err
	}
	if c.to != "" && lease.leader() == c.to {
		return e.printStepdown(stepdownReport{AlreadyLeader: true, NewLeader: c.to, NewEpoch: lease.Lease.Epoch})
	}
	if c.to != "" && !c.force {
		if err := e.checkMember(ctx, nc, c.to); err != nil {
			return err
		}
	}
	var w jetstream.KeyWatcher
	if c.wait {
		// Watch before asking, so the successor's write cannot be missed.
		if w, err = startWatch(ctx, kv); err != nil {
			return err
		}
		defer func() { _ = w.Stop() }()
	}
	req := wire.StepDownRequest{To: c.to}
	if lease.leader() != "" {
		// Only the leader we read steps down: a request that reaches its
		// successor instead is refused, not obeyed.
		req.Epoch = lease.Lease.Epoch
	}
	reply, err := e.requestStepDown(ctx, nc, req)
	if err != nil {
		return err
	}
	r := stepdownReport{Reply: &reply}
	if !reply.OK {
		_ = e.printStepdown(r)
		return fmt.Errorf("%w by %s: %s", errRefused, reply.Node, reply.Error)
	}
	if !c.wait {
		return e.printStepdown(r)
	}
	done := e.waiting(reply.Node + " stepped down; waiting for the new leader")
	next, err := e.awaitLeader(ctx, w, reply.Epoch)
	done()
	r.NewLeader, r.NewEpoch = next.leader(), next.Lease.Epoch
	if perr := e.printStepdown(r); perr != nil {
		return perr
	}
	if err != nil {
		return err
	}
	if c.to != "" && r.NewLeader != c.to {
		return fmt.Errorf("%w: %s leads, not %s as asked (it did not take the lease in time)", errHandover, r.NewLeader, c.to)
	}
	return nil
}

// checkMember makes sure node runs and says it is ready, so that a typo in
// --to, or a node that would not campaign, does not make the leader step
// down for nothing. Every node answers the built-in status request
// (wire.StatusSubject); a node of a version without it is asked for its
// health instead. A node too old to report its readiness counts as ready.
func (e *env) checkMember(ctx context.Context, nc *nats.Conn, node string) error {
	rctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	msg, err := nc.RequestWithContext(rctx, wire.StatusSubject(e.opts.cluster, node), nil)
	if err == nil {
		var st wire.StatusReply
		if err := json.Unmarshal(msg.Data, &st); err != nil {
			return fmt.Errorf("%w from %s: %q: %v", errBadReply, wire.StatusSubject(e.opts.cluster, node), msg.Data, err)
		}
		switch st.Role {
		case wire.StatusNotReady:
			return fmt.Errorf("%w: --to %s: %s; nothing was sent: the node does not campaign while it is not ready, so it would not take the lease (wait until it is ready, choose another node, or use --force)",
				errNotReady, node, readinessReason(st.NotReady))
		}
		return nil
	}
	client, err := health.NewClient(nc, e.opts.cluster)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	r, err := client.QueryNode(ctx, node, e.opts.timeout)
	if err != nil && !errors.Is(err, health.ErrRemote) { // an error reply is about its custom values: it runs
		return fmt.Errorf("%w: --to %s: node %q answers neither status requests on %s nor health queries on %s (%v); nothing was sent: check the name, or use --force",
			errNoAnswer, node, node, wire.StatusSubject(e.opts.cluster, node), health.NodeSubject(e.opts.cluster, node), err)
	}
	if !r.IsReady() {
		return fmt.Errorf("%w: --to %s: %s; nothing was sent: the node does not campaign while it is not ready, so it would not take the lease (wait until it is ready, choose another node, or use --force)",
			errNotReady, node, readinessReason(r.NotReady))
	}
	return nil
}

// startWatch watches the lease and returns once the watch is established
// (the initial value has been delivered).
func startWatch(ctx context.Context, kv jetstream.KeyValue) (jetstream.KeyWatcher, error) {
	w, err := kv.Watch(ctx, wire.LeaseKey)
	if err != nil {
		return nil, fmt.Errorf("watch the lease: %w", err)
	}
	for {
		select {
		case <-ctx.Done():
			_ = w.Stop()
			return nil, ctx.Err()
		case en, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("watch the lease: %w", nats.ErrConnectionClosed)
			}
			if en == nil {
				return w, nil
			}
		}
	}
}

// requestStepDown sends req to the leader and decodes its reply.
func (e *env) requestStepDown(ctx context.Context, nc *nats.Conn, req wire.StepDownRequest) (wire.StepDownReply, error) {
	var reply wire.StepDownReply
	data, err := json.Marshal(req)
	if err != nil {
		return reply, err
	}
	subject := wire.ControlSubject(e.opts.cluster)
	rctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	msg, err := nc.RequestWithContext(rctx, subject, data)
	switch {
	case err == nil:
	case errors.Is(err, nats.ErrNoResponders):
		return reply, fmt.Errorf("%w on %s: no node leads right now, or the nodes do not serve remote step-down", errNoAnswer, subject)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return reply, fmt.Errorf("%w on %s within %v", errNoAnswer, subject, e.opts.timeout)
	default:
		return reply, fmt.Errorf("request on %s: %w", subject, err)
	}
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return reply, fmt.Errorf("%w from %s: %q: %v", errBadReply, subject, msg.Data, err)
	}
	return reply, nil
}

// awaitLeader waits, up to --timeout, for a node to hold the lease with an
// epoch above after, and returns that lease.
func (e *env) awaitLeader(ctx context.Context, w jetstream.KeyWatcher, after int64) (leaseState, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return leaseState{}, fmt.Errorf("%w: the leader stepped down, but no node took the lease within %v (raise --timeout, or run status)", errHandover, e.opts.timeout)
		case en, ok := <-w.Updates():
			if !ok {
				return leaseState{}, fmt.Errorf("watch the lease: %w", nats.ErrConnectionClosed)
			}
			if en == nil {
				continue
			}
			if s := fromEntry(en); s.State == stateHeld && s.Lease.Epoch > after {
				return s, nil
			}
		}
	}
}

func (e *env) printStepdown(r stepdownReport) error {
	if e.opts.json {
		return writeJSON(e.stdout, r)
	}
	return renderStepdown(e.stdout, r)
}
