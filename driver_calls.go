package cluster

// The driver's side of API calls and control requests: each becomes the
// machine's event with a token for its answer; what touches the
// connection without a timeout (a priority request, the cooldown key, a
// reply) runs off the loop.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// askToLead publishes a priority request to the holder's control subject,
// off the loop: a publish waits for a connection that does not drain.
func (d *driver) askToLead(a election.AskToLead) {
	data, _ := json.Marshal(a.Request)
	d.log.Info("asking the leader to hand over: this node has a higher priority", "leader", a.Holder, "priority", a.Request.Priority)
	d.offLoop(func() {
		if err := d.store.Conn().Publish(NodeControlSubject(d.cfg.ClusterID, a.Holder), data); err != nil {
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
		if err := d.store.PutCooldown(ctx, d.cfg.NodeID, cooldown); err != nil {
			d.log.Debug("could not record the cooldown key", "error", err)
		}
	})
}

// commandEvent turns an API call into the machine's event; the answer goes
// back on the command's channels.
func (d *driver) commandEvent(c command) election.Event {
	switch c.kind {
	case cmdStepDown:
		return election.StepDown{To: c.to, Async: c.async, Epoch: c.tenure, Token: d.newToken(func(a election.Reply) { c.reply <- a.Err })}
	case cmdSetPriority:
		c.reply <- nil
		return election.SetPriority{Priority: c.priority}
	case cmdSetMetadata:
		return election.SetMetadata{Metadata: c.metadata, Token: d.newToken(func(a election.Reply) { c.reply <- a.Err })}
	case cmdValidate:
		return election.Validate{Token: d.newToken(func(a election.Reply) {
			if a.Err != nil {
				c.reply <- a.Err
				return
			}
			c.epoch <- a.Epoch
		})}
	}
	return election.Stop{Token: d.newToken(func(a election.Reply) { c.reply <- a.Err })}
}

// controlEvent turns a step-down request from NATS into the machine's
// event; the answer goes back to the requester.
func (d *driver) controlEvent(r controlRequest) election.Event {
	msg := r.msg
	token := d.newToken(func(a election.Reply) {
		if !a.Silent {
			d.offLoop(func() { respond(msg, StepDownReply(a.Answer)) })
		}
	})
	return election.Control{Data: msg.Data, Generic: r.generic, Received: r.received, Token: token}
}
