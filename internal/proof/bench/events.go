package main

import (
	"context"
	"sync"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
)

type eventKind int

const (
	evBecome    eventKind = iota // OnBecomeLeader
	evLose                       // OnLoseLeadership
	evChange                     // OnLeaderChange
	evTenureEnd                  // the ctx given to OnBecomeLeader is done
)

// event is one hook call, stamped on this process's monotonic clock as the
// hook starts.
type event struct {
	kind   eventKind
	node   string
	leader string // evChange: the new leader
	at     time.Time
}

// eventLog records the hook calls of every node of a group, in order.
type eventLog struct {
	mu      sync.Mutex
	evs     []event
	changed chan struct{} // closed and replaced on every add
}

func newEventLog() *eventLog { return &eventLog{changed: make(chan struct{})} }

func (l *eventLog) add(e event) {
	l.mu.Lock()
	l.evs = append(l.evs, e)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// mark is the position of the next event.
func (l *eventLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.evs)
}

// since returns the events from position from on.
func (l *eventLog) since(from int) []event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]event(nil), l.evs[from:]...)
}

// wait returns the first event at or after position from that matches,
// waiting up to timeout for it.
func (l *eventLog) wait(from int, timeout time.Duration, match func(event) bool) (event, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		l.mu.Lock()
		for ; from < len(l.evs); from++ {
			if match(l.evs[from]) {
				e := l.evs[from]
				l.mu.Unlock()
				return e, true
			}
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return event{}, false
		}
	}
}

// hooks records the calls of node id.
func (l *eventLog) hooks(id string) cluster.Hooks {
	return cluster.HookFuncs{
		BecomeLeader: func(ctx context.Context) error {
			l.add(event{kind: evBecome, node: id, at: time.Now()})
			go func() {
				<-ctx.Done()
				l.add(event{kind: evTenureEnd, node: id, at: time.Now()})
			}()
			return nil
		},
		LoseLeadership: func(context.Context) error {
			l.add(event{kind: evLose, node: id, at: time.Now()})
			return nil
		},
		LeaderChange: func(_ context.Context, leader string) error {
			l.add(event{kind: evChange, node: id, leader: leader, at: time.Now()})
			return nil
		},
	}
}

// becomeOther matches OnBecomeLeader on any node but not.
func becomeOther(not string) func(event) bool {
	return func(e event) bool { return e.kind == evBecome && e.node != not }
}
