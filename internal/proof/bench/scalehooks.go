package main

import (
	"context"
	"sync/atomic"
	"time"
)

// clusterCounts counts the hook calls of the 3 nodes of one cluster of
// figure 5. They are counters, not an event log, so that what a Node costs
// is not inflated by the benchmark's own bookkeeping.
type clusterCounts struct {
	become, lose, change atomic.Int64
	firstLed             atomic.Int64 // UnixNano of the first OnBecomeLeader
	led                  chan<- struct{}
}

// counting implements cluster.Hooks for one node.
type counting struct{ c *clusterCounts }

func (h counting) OnBecomeLeader(context.Context) error {
	h.c.become.Add(1)
	if h.c.firstLed.CompareAndSwap(0, time.Now().UnixNano()) {
		h.c.led <- struct{}{}
	}
	return nil
}

func (h counting) OnLoseLeadership(context.Context) error {
	h.c.lose.Add(1)
	return nil
}

func (h counting) OnLeaderChange(context.Context, string) error {
	h.c.change.Add(1)
	return nil
}

// totals sums the counters of every cluster.
func totals(cs []*clusterCounts) (become, lose, change int64) {
	for _, c := range cs {
		become += c.become.Load()
		lose += c.lose.Load()
		change += c.change.Load()
	}
	return
}
