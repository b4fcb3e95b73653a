package cluster

import (
	"context"
	"sync"
)

// LeaderEventKind says what a LeaderEvent reports; it prints as its name.
type LeaderEventKind string

// The kinds of LeaderEvent, one per hook.
const (
	// LeaderChanged: the leader as this node knows it changed (Leader is
	// "" when nobody leads). Also the first event of every Events
	// channel, with the leader known at that moment.
	LeaderChanged LeaderEventKind = "leader-changed"
	// BecameLeader: this node became the leader; Ctx is the tenure's.
	BecameLeader LeaderEventKind = "became-leader"
	// LostLeadership: this node's tenure ended.
	LostLeadership LeaderEventKind = "lost-leadership"
)

// LeaderEvent is what Events delivers: the hooks, as values.
type LeaderEvent struct {
	Kind LeaderEventKind
	// Leader is the leader's NodeID as this node knows it when the event
	// is made; "" when nobody leads (or, for LostLeadership, not known yet).
	Leader string
	// Epoch is, for BecameLeader, the tenure's epoch (TenureEpoch);
	// otherwise this node's epoch (Node.Epoch) when the event is made.
	Epoch int64
	// Ctx, for BecameLeader, is the tenure's ctx (Tenure.Ctx): cancelled
	// the moment this tenure ends. Nil for the other kinds.
	Ctx context.Context
}

// observeBuffer is how many events an Events channel holds. A reader that
// falls that far behind has its channel closed (see Events).
const observeBuffer = 64

// Events returns a channel of leadership events, for code that selects
// rather than implements Hooks (like etcd's Observe, or hashicorp/raft's
// LeaderCh). The first event is LeaderChanged with the leader known now;
// after it come the hooks' events, in the order the hooks run, each
// delivered when its hook has been called (a hook that blocks delays
// them). Events never block the election or the hooks: a reader that lets
// 64 events pile up has its channel closed, and calls Events
// again to pick up from the current state. The channel is closed when ctx
// ends and when the Node has stopped. Events works before Start too.
func (n *Node) Events(ctx context.Context) <-chan LeaderEvent {
	return n.events.subscribe(ctx, LeaderEvent{Kind: LeaderChanged, Leader: n.Leader(), Epoch: n.Epoch()})
}

// eventFeed fans hook calls out to Events channels. It is one of the
// Node's hooks (composed after the application's), so events keep the
// dispatcher's order.
type eventFeed struct {
	node *Node

	mu     sync.Mutex
	subs   map[chan LeaderEvent]struct{}
	closed bool
}

func (f *eventFeed) subscribe(ctx context.Context, first LeaderEvent) <-chan LeaderEvent {
	ch := make(chan LeaderEvent, observeBuffer)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		close(ch)
		return ch
	}
	if f.subs == nil {
		f.subs = map[chan LeaderEvent]struct{}{}
	}
	f.subs[ch] = struct{}{}
	ch <- first
	context.AfterFunc(ctx, func() { f.drop(ch) })
	return ch
}

// drop closes one subscriber's channel, once.
func (f *eventFeed) drop(ch chan LeaderEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.subs[ch]; ok {
		delete(f.subs, ch)
		close(ch)
	}
}

// publish hands ev to every subscriber; one whose buffer is full is dropped.
func (f *eventFeed) publish(ev LeaderEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.subs {
		select {
		case ch <- ev:
		default:
			delete(f.subs, ch)
			close(ch)
		}
	}
}

// close ends every channel: the Node has stopped, no event will follow.
func (f *eventFeed) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for ch := range f.subs {
		close(ch)
	}
	f.subs = nil
}

// OnBecomeLeader publishes BecameLeader.
func (f *eventFeed) OnBecomeLeader(ctx context.Context) error {
	epoch, _ := TenureEpoch(ctx)
	f.publish(LeaderEvent{Kind: BecameLeader, Leader: f.node.cfg.NodeID, Epoch: epoch, Ctx: ctx})
	return nil
}

// OnLoseLeadership publishes LostLeadership.
func (f *eventFeed) OnLoseLeadership(context.Context) error {
	f.publish(LeaderEvent{Kind: LostLeadership, Leader: f.node.Leader(), Epoch: f.node.Epoch()})
	return nil
}

// OnLeaderChange publishes LeaderChanged.
func (f *eventFeed) OnLeaderChange(_ context.Context, leader string) error {
	f.publish(LeaderEvent{Kind: LeaderChanged, Leader: leader, Epoch: f.node.Epoch()})
	return nil
}
