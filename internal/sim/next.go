package sim

// The next machine (internal/election/v2, docs/design-next.md) behind
// the simulator: an adapter that turns the simulator's events into the
// next machine's and its actions back, so that the same world, faults
// and checker judge it. It goes when the simulator moves to the next
// machine whole.

import (
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	next "github.com/ozanturksever/go-cluster/internal/election/v2"
)

// nextLogic runs one node's next machine.
type nextLogic struct {
	m       *next.Machine
	w       *world
	pending map[uint64]election.Action // requests out, by ID
}

// nextMachines makes next machines for the nodes of w.
func nextMachines(w *world) factory {
	return func(cfg election.Params, _ election.BucketFacts, seed uint64) logic {
		p := next.Params{NodeID: cfg.NodeID, Instance: cfg.Instance, Observer: cfg.Observer,
			LeaseTTL: cfg.LeaseTTL, RenewInterval: cfg.RenewInterval, SafetyMargin: cfg.SafetyMargin,
			RequestTimeout: cfg.RequestTimeout, DrainTimeout: cfg.DrainTimeout, Cooldown: cfg.Cooldown,
			Priority: cfg.Priority, PreemptDelay: cfg.PreemptDelay, Metadata: cfg.Metadata,
			ReadinessCheck: cfg.ReadinessCheck, ReadinessThreshold: cfg.ReadinessThreshold}
		l := &nextLogic{m: next.NewWithKnobs(p, seed, w.opt.NextKnobs), w: w, pending: map[uint64]election.Action{}}
		return l
	}
}

func (l *nextLogic) Snapshot() election.View {
	epoch, deadline, ok := l.m.Tenure()
	return election.View{Epoch: epoch, Tenure: ok, Deadline: deadline}
}

func (l *nextLogic) Handle(now time.Time, ev election.Event) []election.Action {
	nev, ok := l.event(ev)
	if !ok {
		return nil
	}
	return l.actions(l.m.Handle(now, nev))
}

// event is the next machine's form of a simulator event; false for one
// it has no use for (the stream-created advisory).
func (l *nextLogic) event(ev election.Event) (next.Event, bool) {
	switch e := ev.(type) {
	case election.Tick:
		return next.Tick{}, true
	case election.Entry:
		return next.Entry{KV: next.KVEntry{Rev: e.KV.Rev, Op: next.Op(e.KV.Op), Value: e.KV.Value}}, true
	case election.Synced:
		return next.Synced{}, true
	case election.WatchClosed:
		return next.WatchClosed{}, true
	case election.Conn:
		return next.Conn{Connected: e.Connected, Reconnects: e.Reconnects}, true
	case election.Health:
		return next.Health{Err: e.Err}, true
	case election.LoseStarted:
		return next.LoseStarted{Epoch: e.Epoch}, true
	case election.LoseDone:
		return next.LoseDone{Epoch: e.Epoch}, true
	case election.StepDown:
		return next.StepDown{To: e.To, Async: e.Async, Token: e.Token, Epoch: e.Epoch}, true
	case election.Stop:
		return next.Stop{Token: e.Token}, true
	case election.Validate:
		return next.Validate{Token: e.Token}, true
	case election.SetMetadata:
		return next.SetMetadata{Metadata: e.Metadata, Token: e.Token}, true
	case election.Control:
		return next.Control{Data: e.Data, Generic: e.Generic, Received: e.Received, Token: e.Token}, true
	case election.Result:
		return l.result(e)
	}
	return nil, false
}

// result answers the request of e's ID in the next machine's types.
func (l *nextLogic) result(e election.Result) (next.Event, bool) {
	req, ok := l.pending[e.ID]
	if !ok {
		return nil, false
	}
	delete(l.pending, e.ID)
	switch req.(type) {
	case election.Write:
		return next.WriteResult{ID: e.ID, Rev: e.Rev, Err: e.Err, Class: e.Class}, true
	case election.Incarnation:
		b := next.Incarnation{Created: e.Created, Protocol: next.Protocol, LeaseTTL: e.LeaseTTL, MaxTTL: e.MaxTTL,
			LastSeq: e.LastSeq, Age: e.Age}
		return next.ConfirmResult{ID: e.ID, Bucket: b, Err: e.Err, Class: e.Class}, true
	case election.Watch:
		return next.WatchStarted{ID: e.ID, Err: e.Err, Class: e.Class}, true
	}
	return nil, false
}

// actions are the simulator's form of the next machine's actions.
func (l *nextLogic) actions(in []next.Action) []election.Action {
	var out []election.Action
	for _, a := range in {
		var o election.Action
		switch e := a.(type) {
		case next.Write:
			o = election.Write{ID: e.ID, Purpose: purposes[e.Purpose], Create: e.Create, Rev: e.Rev, Value: e.Value,
				Timeout: e.Timeout, CheckLastSeq: e.Create, LastSeq: e.LastSeq}
			l.pending[e.ID] = o
		case next.Confirm:
			o = election.Incarnation{ID: e.ID, Timeout: e.Timeout}
			l.pending[e.ID] = o
		case next.Watch:
			o = election.Watch{ID: e.ID, Timeout: e.Timeout}
			l.pending[e.ID] = o
		case next.Become:
			o = election.Become{Epoch: e.Epoch, Rev: e.Rev, Deadline: e.Deadline, Cause: e.Cause, Wait: e.Wait}
		case next.Lose:
			o = election.Lose{Epoch: e.Epoch, Cause: e.Cause}
		case next.LeaderChange:
			o = election.LeaderChange{Leader: e.Leader}
		case next.AskToLead:
			o = election.AskToLead{Holder: e.Holder, Request: e.Request}
		case next.CooldownKey:
			o = election.CooldownKey{Cooldown: e.Cooldown}
		case next.Reply:
			o = election.Reply{Token: e.Token, Err: e.Err, Epoch: e.Epoch, Control: e.Control, Silent: e.Silent, Answer: e.Answer}
		case next.Fail:
			o = election.Fail{Err: e.Err}
		case next.Finished:
			o = election.Finished{}
		case next.Log:
			o = election.Log{Level: e.Level, Msg: e.Msg, Args: e.Args}
		case next.Arm:
			o = election.Arm{At: e.At}
		default:
			continue // Extend: the simulator reads the deadline from Snapshot
		}
		out = append(out, o)
	}
	return out
}

var purposes = map[next.Purpose]election.Purpose{next.Acquire: election.Acquire, next.Renew: election.Renew, next.Release: election.Release}
