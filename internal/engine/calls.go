package engine

// The driver's side of API calls and control requests: each becomes the
// machine's event with a token for its answer; what touches the
// connection without a timeout (a priority request, the cooldown key, a
// reply) runs off the loop.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// askToLead publishes a priority request to the holder's control subject,
// off the loop: a publish waits for a connection that does not drain.
func (d *driver) askToLead(a election.AskToLead) {
	data, _ := json.Marshal(wire.StepDownRequest{To: d.cfg.Params.NodeID, Reason: wire.ReasonPriority, Priority: a.Priority})
	d.log.Info("asking the leader to hand over: this node has a higher priority", "leader", a.Holder, "priority", a.Priority)
	d.offLoop(func() {
		if err := d.store.Conn().Publish(wire.NodeControlSubject(d.cfg.ClusterID, a.Holder), data); err != nil {
			d.log.Debug("could not ask the leader to yield", "error", err)
		}
	})
}

// offLoop runs f on a goroutine of its own, counted for teardown: what
// touches the connection without a timeout stays off the loop.
func (d *driver) offLoop(f func()) {
	d.requests.Add(1)
	go func() {
		defer d.requests.Done()
		f()
	}()
}

// recordCooldown writes cooldown-<NodeID> (informational), in the
// background.
func (d *driver) recordCooldown(cooldown time.Duration) {
	d.offLoop(func() {
		ctx, cancel := context.WithTimeout(d.base, d.cfg.RequestTimeout)
		defer cancel()
		if err := d.store.PutCooldown(ctx, d.cfg.Params.NodeID, cooldown); err != nil {
			d.log.Debug("could not record the cooldown key", "error", err)
		}
	})
}

// commandEvent turns an API call into the machine's event (nil for none);
// the answer goes back on the command's channels.
func (d *driver) commandEvent(c command) election.Event {
	switch c.Kind {
	case cmdStepDown:
		return election.StepDown{To: c.To, Async: c.Async, Epoch: c.Tenure, Token: d.newToken(func(a election.Reply) { c.Reply <- a.Err })}
	case cmdSetPriority:
		c.Reply <- nil
		return election.SetPriority{Priority: c.Priority}
	case cmdSetMetadata:
		c.Reply <- nil
		return election.SetMetadata{Metadata: c.Metadata}
	case cmdValidate:
		if now := d.view.Now(); d.tenure != nil && d.view.Tenure(now) != nil {
			// answered by the Extend of a renewal sent from now on, or its Lose
			d.tenure.checks = append(d.tenure.checks, check{command: c, at: now})
			return election.Validate{}
		}
		c.Reply <- wire.ErrNotLeader
		return nil
	}
	d.newToken(func(election.Reply) { c.Reply <- nil }) // answered when the loop ends
	return election.Stop{}
}

// controlEvent decodes a step-down request from NATS into the machine's
// StepDown; nil for a malformed one, answered here. The machine's answer
// goes back to the requester as a StepDownReply; on the cluster's subject
// only the leader answers.
func (d *driver) controlEvent(r controlRequest) election.Event {
	msg, node := r.Msg, d.cfg.Params.NodeID
	req, err := wire.DecodeStepDown(msg.Data)
	if err != nil {
		if !r.Generic || d.view.Tenure(d.view.Now()) != nil {
			d.offLoop(func() { respond(msg, wire.StepDownReply{Node: node, Error: err.Error()}) })
		}
		return nil
	}
	leading := d.view.Tenure(d.view.Now()) != nil // when it came: on the cluster's subject only a leader answers
	token := d.newToken(func(a election.Reply) {
		out := wire.StepDownReply{OK: a.Err == nil, Node: node, Epoch: a.Epoch}
		switch {
		case r.Generic && (!leading || errors.Is(a.Err, wire.ErrNotLeader)):
			return
		case errors.Is(a.Err, wire.ErrNotLeader):
			out.Leader = d.view.snapshot().Leader
		}
		if a.Epoch != 0 {
			out.To = req.To
		}
		if a.Err != nil {
			out.Error = a.Err.Error()
		}
		d.offLoop(func() { respond(msg, out) })
	})
	d.log.Info("step-down requested over NATS", "to", req.To, "reason", req.Reason)
	return election.StepDown{To: req.To, Epoch: req.Epoch, Preempt: req.Reason == wire.ReasonPriority,
		Priority: req.Priority, Received: r.Received, Token: token}
}
