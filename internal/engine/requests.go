package engine

// The node's requests over NATS: step-down requests on the cluster's
// control subject and the node's, status requests on the node's status
// subject and the cluster's. The four subscriptions deliver into one
// channel that one goroutine reads, where a subscription with a handler
// costs a nats.go goroutine each (issue 43: many Nodes on one
// connection).

import (
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/presence"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// requestBuffer is the room of the channel the four subscriptions share.
// The goroutine only queues a step-down request for the loop (or answers
// it busy) and answers a status request from the view, so the channel
// stays near empty; requests come from operators and tools, a few at a
// time. When it is full, nats.go's reader drops the message (it never
// waits on a subscription's channel: the connection is shared) and
// reports a slow consumer (the connection's error handler, LastError):
// the request times out at the requester, as for a node that does not
// answer. Nothing the election decides travels here. The loop's own
// queue of step-down requests holds 16 too; each slot costs 8 B a Node.
const requestBuffer = 16

// requestServer serves a node's step-down and status requests.
type requestServer struct {
	subs []*nats.Subscription
	msgs chan *nats.Msg
	// clusterControl and nodeControl are the step-down subjects: the
	// cluster's (only a leader answers) and the node's. The other two
	// carry status requests.
	clusterControl, nodeControl string
	quit                        chan struct{}
	done                        chan struct{} // closed when run has returned
	stopOnce                    sync.Once
}

// serveRequests subscribes to node self.NodeID's step-down and status
// subjects and serves them until Stop: a step-down request is stamped
// with now (the view's clock) and queued for the driver through control;
// a status request is answered with self's reply for the view view
// returns.
func serveRequests(nc *nats.Conn, self presence.Self, now func() time.Time, control chan<- controlRequest, view func() presence.View) (*requestServer, error) {
	r := &requestServer{msgs: make(chan *nats.Msg, requestBuffer),
		clusterControl: wire.ControlSubject(self.ClusterID), nodeControl: wire.NodeControlSubject(self.ClusterID, self.NodeID),
		quit: make(chan struct{}), done: make(chan struct{})}
	for _, subject := range append([]string{r.clusterControl, r.nodeControl}, self.StatusSubjects()...) {
		sub, err := nc.ChanSubscribe(subject, r.msgs)
		if err != nil {
			r.unsubscribe()
			return nil, fmt.Errorf("subscribe %s: %w", subject, err)
		}
		r.subs = append(r.subs, sub)
	}
	go r.run(self, now, control, view)
	return r, nil
}

// run serves the requests until Stop.
func (r *requestServer) run(self presence.Self, now func() time.Time, control chan<- controlRequest, view func() presence.View) {
	defer close(r.done)
	for {
		select {
		case m := <-r.msgs:
			switch m.Subject {
			case r.clusterControl:
				forwardControl(m, true, self.NodeID, now(), control)
			case r.nodeControl:
				forwardControl(m, false, self.NodeID, now(), control)
			default:
				self.Answer(m, view)
			}
		case <-r.quit:
			return
		}
	}
}

// Stop ends the subscriptions and the goroutine; requests not yet served
// go unanswered. It does not wait: Wait does. A nil server (an observer
// answers nothing) does nothing.
func (r *requestServer) Stop() {
	if r == nil {
		return
	}
	r.stopOnce.Do(func() {
		r.unsubscribe()
		close(r.quit)
	})
}

// Wait returns once the goroutine has ended (after Stop).
func (r *requestServer) Wait() {
	if r != nil {
		<-r.done
	}
}

func (r *requestServer) unsubscribe() {
	for _, s := range r.subs {
		_ = s.Unsubscribe()
	}
}
