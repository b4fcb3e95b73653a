package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/state"
)

// putTimeout bounds one state write: longer than the tests keep a node
// frozen, so that a write held across the freeze gets its verdict. It is
// not the tenure's ctx: a write cut short by the tenure's end would leave
// its outcome unknown.
const putTimeout = 15 * time.Second

// stateWriter is the leader's work with -state: fenced state writes, each
// reported as a state_put event.
type stateWriter struct {
	out      *emitter
	interval time.Duration
	stale    int          // attempts after a tenure ends
	seq      atomic.Int64 // numbers the writes of this process, across tenures
}

// lead writes until the tenure ends, then s.stale more times, as a leader
// that has not noticed its tenure ended would: those must all be refused.
func (s *stateWriter) lead(tenure context.Context, n *cluster.Node) {
	epoch, _ := cluster.TenureEpoch(tenure)
	st := n.State()
	for after := 0; after < s.stale; {
		if tenure.Err() != nil {
			after++
		}
		s.put(st, epoch)
		t := time.NewTimer(s.interval)
		<-t.C
	}
	s.out.emit(Event{Event: "state_done", Epoch: epoch})
}

// put makes one write, to a key of its own, and reports it.
func (s *stateWriter) put(st *state.State, epoch int64) {
	seq := s.seq.Add(1)
	key := fmt.Sprintf("w.%s.%d", s.out.node, seq)
	sent := time.Now()
	s.out.emit(Event{Event: "state_send", Epoch: epoch, Seq: seq, Sent: sent.UnixNano()})
	ctx, cancel := context.WithTimeout(context.Background(), putTimeout)
	rev, err := st.Put(ctx, key, []byte(key))
	cancel()
	s.out.emit(Event{Event: "state_put", Epoch: epoch, Seq: seq, Rev: rev, Sent: sent.UnixNano(),
		OK: err == nil, Outcome: outcome(err), Error: errText(err)})
}

// outcome names the verdict of a write.
func outcome(err error) string {
	switch {
	case err == nil:
		return "acked"
	case errors.Is(err, state.ErrWriteUncertain): // it wraps ErrNotLeader too
		return "uncertain"
	case errors.Is(err, state.ErrFenced):
		return "fenced"
	case errors.Is(err, cluster.ErrNotLeader):
		return "not_leader"
	default:
		return "error" // a timeout, say: it may have landed
	}
}
