package cluster

// The driver's side of a tenure and of what the Node shows: the tenure's
// ctx, the hooks queued on the dispatcher, the metrics, and the view that
// the public queries read.

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// driverTenure is the live tenure as the driver carries it: the ctx handed
// to OnBecomeLeader, and the timer that ends it at its deadline.
type driverTenure struct {
	epoch  int64
	ctx    context.Context
	cancel context.CancelFunc
	// timer cancels ctx and queues OnLoseLeadership once the deadline
	// has passed, even if the loop is slow to hear of it: the machine's
	// tick at the deadline does the same, whichever is first.
	timer    *time.Timer
	loseOnce sync.Once
	lose     *loseSignals
}

// loseSignals are the dispatcher's signals for the OnLoseLeadership last
// queued: started closes when it begins, done when it returns.
type loseSignals struct {
	epoch   int64
	started chan struct{} // nil once reported
	done    chan struct{}
}

// channels returns the signals not yet reported; nil channels for none.
func (l *loseSignals) channels() (started, done <-chan struct{}) {
	if l == nil {
		return nil, nil
	}
	if l.started != nil {
		return l.started, nil // done is reported after started
	}
	return nil, l.done
}

// become starts the tenure the machine won: its ctx, the view, the
// metrics, OnBecomeLeader, and the deadline timer.
func (d *driver) become(a election.Become) {
	ctx, cancel := context.WithCancel(context.WithValue(d.base, tenureEpochKey{}, a.Epoch))
	t := &driverTenure{epoch: a.Epoch, ctx: ctx, cancel: cancel,
		lose: &loseSignals{epoch: a.Epoch, started: make(chan struct{}), done: make(chan struct{})}}
	d.tenure = t
	d.view.mu.Lock()
	d.view.tenureCtx, d.view.tenureEpoch, d.view.tenureRev = ctx, a.Epoch, a.Rev
	d.view.deadline = a.Deadline
	d.view.epoch = a.Epoch // with the tenure: whoever sees IsLeader sees its epoch
	// And itself as leader: OnBecomeLeader may run before the leader
	// change that follows in the same batch is carried out (it was seen
	// reading "" under load in ExampleNode_StepDown).
	d.view.leader = d.cfg.NodeID
	d.view.mu.Unlock()
	// Made before it can fire (deadlineFired uses t.timer), armed after
	// OnBecomeLeader is queued: it may queue OnLoseLeadership at once.
	t.timer = time.AfterFunc(time.Hour, func() { d.deadlineFired(t) })
	d.log.Info("became leader", "epoch", a.Epoch, "revision", a.Rev)
	d.cfg.Metrics.ObserveElection(ElectionCause(a.Cause), a.Wait)
	d.cfg.Metrics.ObserveLeadership(true, a.Epoch)
	d.disp.enqueue(hookCall{name: "OnBecomeLeader", fn: func() error {
		err := d.hooks.OnBecomeLeader(ctx)
		if err != nil && d.cfg.OnBecomeLeaderError == LeaderHookErrorStepsDown {
			d.stepDownAfterHook(a.Epoch, err)
		}
		return err
	}})
	t.timer.Reset(time.Until(a.Deadline))
}

// stepDownAfterHook ends the tenure at epoch after its OnBecomeLeader
// failed (LeaderHookErrorStepsDown). It runs on the dispatcher: it asks
// the loop, never waits for the step-down (which waits for
// OnLoseLeadership, queued behind this hook: rule 7).
func (d *driver) stepDownAfterHook(epoch int64, err error) {
	d.log.Warn("OnBecomeLeader failed; stepping down so that another node leads", "epoch", epoch, "error", err)
	c := command{kind: cmdStepDown, reply: make(chan error, 1), tenure: epoch, async: true}
	select {
	case d.cmds <- c:
	case <-d.exited:
	case <-d.base.Done():
	}
}

// deadlineFired runs on the timer's goroutine: it ends the tenure if the
// deadline (which renewals move, in the view) has passed, or waits for the
// moved one. The loop may be busy, or stuck on a connection that does not
// drain; the tenure must not outlive its deadline because of that.
func (d *driver) deadlineFired(t *driverTenure) {
	d.view.mu.Lock()
	if d.view.tenureCtx != t.ctx {
		d.view.mu.Unlock()
		return
	}
	if wait := time.Until(d.view.deadline); wait > 0 {
		d.view.mu.Unlock()
		t.timer.Reset(wait)
		return
	}
	t.cancel()
	if d.view.leader == d.cfg.NodeID {
		d.view.leader = "" // as lose does, before OnLoseLeadership can read it (rule 44)
	}
	d.view.mu.Unlock()
	d.queueLose(t)
	select {
	case d.expired <- struct{}{}: // the machine hears of it at once
	default:
	}
}

// lose ends the tenure at a.epoch: its ctx is cancelled, and
// OnLoseLeadership is queued with DrainTimeout, unless the deadline timer
// did it first.
func (d *driver) lose(a election.Lose) {
	t := d.tenure
	if t == nil || t.epoch != a.Epoch {
		return
	}
	d.tenure = nil
	t.timer.Stop()
	d.view.mu.Lock()
	t.cancel()
	d.view.tenureCtx = nil
	if d.view.leader == d.cfg.NodeID {
		// Not itself any more, before OnLoseLeadership can read it; the
		// leader change that follows says who (ExampleNode_Observe).
		d.view.leader = ""
	}
	d.view.mu.Unlock()
	if a.Cause != nil {
		d.log.Warn("lost leadership", "epoch", a.Epoch, "cause", a.Cause)
	}
	d.losing = t.lose
	d.queueLose(t)
}

// queueLose queues OnLoseLeadership for t, once. sync.Once makes a second
// caller wait until the first has queued it, so no hook of a later tenure
// can be queued ahead of it.
func (d *driver) queueLose(t *driverTenure) {
	t.loseOnce.Do(func() {
		d.cfg.Metrics.ObserveLeadership(false, t.epoch)
		timeout := d.cfg.DrainTimeout
		d.disp.enqueue(hookCall{name: "OnLoseLeadership", started: t.lose.started, done: t.lose.done, fn: func() error {
			ctx, cancel := context.WithTimeout(d.hookCtx, timeout)
			defer cancel()
			return d.hooks.OnLoseLeadership(ctx)
		}})
	})
}

// leaderChanged reports a new known leader: the view, the metric, and
// OnLeaderChange.
func (d *driver) leaderChanged(leader string) {
	d.view.mu.Lock()
	d.view.leader = leader
	close(d.view.changed)
	d.view.changed = make(chan struct{})
	d.view.mu.Unlock()
	d.cfg.Metrics.ObserveLeader(leader)
	d.disp.enqueue(hookCall{name: "OnLeaderChange", fn: func() error { return d.hooks.OnLeaderChange(d.hookCtx, leader) }})
}

// publish copies the machine's state to the view the public queries read.
func (d *driver) publish() {
	s := d.m.Snapshot()
	d.view.mu.Lock()
	d.view.epoch = s.Epoch
	d.view.lease, d.view.hasRec = Lease(s.Lease), s.HasRec
	d.view.ready = s.Ready
	if s.Tenure && d.view.tenureCtx != nil && d.view.tenureEpoch == s.Epoch {
		d.view.tenureRev, d.view.deadline = s.Rev, s.Deadline
	}
	d.view.mu.Unlock()
}

// askToLead publishes a priority request to the holder's control subject,
// off the loop: a publish waits for a connection that does not drain.
func (d *driver) askToLead(a election.AskToLead) {
	data, _ := json.Marshal(a.Request)
	d.log.Info("asking the leader to hand over: this node has a higher priority", "leader", a.Holder, "priority", d.cfg.Priority)
	d.offLoop(func() {
		if err := d.store.nc.Publish(NodeControlSubject(d.cfg.ClusterID, a.Holder), data); err != nil {
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
		if err := d.store.putCooldown(ctx, d.cfg.NodeID, cooldown); err != nil {
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
