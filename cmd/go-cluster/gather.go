package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ozanturksever/go-cluster/health"
)

// defaultSettle is how long a cluster-wide query waits for more replies
// once every member it knows of has answered: replies of members on one
// network arrive within milliseconds of each other. The nats.js client
// gives its "stall" strategy of requestMany the same default.
const defaultSettle = 300 * time.Millisecond

// gathering is one cluster-wide health query: a request on
// health.ClusterSubject, answered by every member on one inbox.
//
// Nothing lists the members of a cluster: nodes join by starting and
// leave by stopping. The members the query knows of are the lease's
// holder and the successor a release names (from known), and every leader
// a reply names. It returns once all of them have answered and no other
// reply has come for settle, at the timeout, or at once when no member
// runs. With settle 0 it always waits the whole timeout.
type gathering struct {
	nc        *nats.Conn
	clusterID string
	known     []string
	timeout   time.Duration
	settle    time.Duration
}

// run sends the query and collects the replies, sorted by node. An error
// wraps health.ErrNoResponders when no member runs, or is ctx's error.
func (g gathering) run(ctx context.Context) ([]health.Response, error) {
	subject := health.ClusterSubject(g.clusterID)
	var in replyQueue
	in.ready = make(chan struct{}, 1)
	sub, err := g.nc.Subscribe(g.nc.NewInbox(), in.add)
	if err != nil {
		return nil, fmt.Errorf("health query: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := g.nc.PublishRequest(subject, sub.Subject, nil); err != nil {
		return nil, fmt.Errorf("health query: %w", err)
	}

	timeout := time.NewTimer(g.timeout)
	defer timeout.Stop()
	var settled <-chan time.Time
	var settle *time.Timer
	defer func() {
		if settle != nil {
			settle.Stop()
		}
	}()

	answered := map[string]bool{} // the members known of: have they answered?
	pending := 0
	expect := func(node string) {
		if _, ok := answered[node]; !ok && node != "" {
			answered[node] = false
			pending++
		}
	}
	for _, n := range g.known {
		expect(n)
	}
	var out []health.Response
	sorted := func() []health.Response {
		slices.SortStableFunc(out, func(a, b health.Response) int { return cmp.Compare(a.NodeID, b.NodeID) })
		return out
	}
	for {
		select {
		case <-ctx.Done():
			return sorted(), ctx.Err()
		case <-timeout.C:
			return sorted(), nil
		case <-settled:
			return sorted(), nil
		case <-in.ready:
		}
		got := in.take()
		for _, m := range got {
			if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
				return nil, fmt.Errorf("%w: no member answers health queries on %s", health.ErrNoResponders, subject)
			}
			var r health.Response
			if err := json.Unmarshal(m.Data, &r); err != nil || (r.NodeID == "" && r.Error == "") {
				slog.Warn("ignored a reply that is not a health response", "subject", subject, "reply", string(m.Data))
				continue
			}
			out = append(out, r)
			expect(r.NodeID)
			if !answered[r.NodeID] {
				answered[r.NodeID] = true
				pending--
			}
			expect(r.Leader)
		}
		if len(got) == 0 || g.settle <= 0 {
			continue
		}
		if pending > 0 || len(out) == 0 {
			if settle != nil {
				settle.Stop() // a reply named a member that has not answered
			}
			continue
		}
		// Everyone known answered: wait for strangers only while replies
		// keep coming.
		if settle == nil {
			settle = time.NewTimer(g.settle)
			settled = settle.C
		} else {
			settle.Reset(g.settle)
		}
	}
}

// replyQueue queues the replies of one query without a bound, so that a
// large cluster answering at once is not dropped as a slow consumer.
type replyQueue struct {
	mu    sync.Mutex
	msgs  []*nats.Msg
	ready chan struct{} // capacity 1: "msgs may be non-empty"
}

// add is the subscription's handler.
func (q *replyQueue) add(m *nats.Msg) {
	q.mu.Lock()
	q.msgs = append(q.msgs, m)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns the queued replies and empties the queue.
func (q *replyQueue) take() []*nats.Msg {
	q.mu.Lock()
	defer q.mu.Unlock()
	msgs := q.msgs
	q.msgs = nil
	return msgs
}
