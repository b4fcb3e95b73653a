package chaos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/state"
)

// Outcome is what a state write returned.
type Outcome int

// The outcomes of a state write.
const (
	Acked     Outcome = iota // accepted: it must be in the stream, after the writer's own lease record
	Fenced                   // ErrFenced: the server refused it, nothing was written
	NotLeader                // ErrNotLeader without ErrFenced: the node refused it, nothing was sent
	Unknown                  // any other error (a timeout, the node stopping...): it may or may not have landed
)

func (o Outcome) String() string {
	switch o {
	case Acked:
		return "acknowledged"
	case Fenced:
		return "refused (ErrFenced)"
	case NotLeader:
		return "refused (ErrNotLeader)"
	}
	return "outcome unknown"
}

// StateTry is one state write the leader's writer made through
// Node.State(), and what came of it. Each write of a Commit is one
// StateTry.
type StateTry struct {
	Instance string // the Node that wrote: "<NodeID>#<generation>"
	Key      string // the state key (without "state.")
	Value    string // the tag: "<instance>/<epoch>/<sequence>", unique in the run
	Seq      uint64 // the sequence in the tag: the run numbers its state writes 1, 2, 3...
	Epoch    int64  // Node.Epoch when it wrote (informational: the stream's header tells the epoch used)
	// Commit is the sequence of the first write of its Commit, 0 for a Put;
	// Writes is how many writes that Commit had.
	Commit   uint64
	Writes   int
	Outcome  Outcome
	Cause    string // for Unknown: why, in a word
	Err      string // for Unknown: the error
	Revision uint64 // for Acked: the revision State returned (for a Commit, this write's)
	Sent     time.Time
}

// stateTag is the value of write seq by instance at epoch.
func stateTag(instance string, epoch int64, seq uint64) string {
	return fmt.Sprintf("%s/%d/%d", instance, epoch, seq)
}

// parseStateTag returns the instance and NodeID that wrote tag.
func parseStateTag(tag string) (instance, nodeID string, ok bool) {
	parts := strings.Split(tag, "/")
	if len(parts) != 3 {
		return "", "", false
	}
	if _, err := strconv.ParseInt(parts[1], 10, 64); err != nil {
		return "", "", false
	}
	if _, err := strconv.ParseUint(parts[2], 10, 64); err != nil {
		return "", "", false
	}
	id, _, found := strings.Cut(parts[0], "#")
	if !found || id == "" {
		return "", "", false
	}
	return parts[0], id, true
}

// stateKeys is how many keys the writer spreads its writes over: the
// bucket keeps 8 revisions of each key, so a write is removed from the
// stream only 8 x stateKeys writes later, long after the recorder read it.
const stateKeys = 32

// stateLedger keeps every StateTry. Safe for concurrent use.
type stateLedger struct {
	mu    sync.Mutex
	tries []StateTry
	seq   uint64 // the last write's sequence
}

// next reserves the sequences of n writes and returns the first.
func (l *stateLedger) next(n int) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.seq + 1
	l.seq += uint64(n)
	return first
}

func (l *stateLedger) add(ts ...StateTry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tries = append(l.tries, ts...)
}

func (l *stateLedger) all() []StateTry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]StateTry(nil), l.tries...)
}

// writeState is the leader's state work for one tenure: until ctx ends,
// write tagged values through node.State(), a Commit of 2 or 3 keys a
// quarter of the time when the bucket allows atomic batches, and record
// what each write returned. The writes do not use ctx, so that one in
// flight when the tenure ends gets its answer (accepted before the lease
// moved, or refused). After the tenure, one more write tries as a stale
// leader would: it must be refused, or land in a later tenure of the same
// Node.
func (r *run) writeState(node *cluster.Node, inst string, ctx context.Context) {
	st := node.State()
	pause := time.NewTimer(0)
	defer pause.Stop()
	for {
		select {
		case <-ctx.Done():
			r.stateWrite(st, node, inst, 1)
			return
		case <-pause.C:
		}
		n := 1
		if r.commitOK.Load() && r.writerFloat() < 0.25 {
			n = 2 + int(r.writerFloat()*2)
		}
		r.stateWrite(st, node, inst, n)
		pause.Reset(r.writeInterval())
	}
}

// stateWrite makes one Put (n = 1) or one Commit of n writes and records
// the outcome of each write.
func (r *run) stateWrite(st *state.State, node *cluster.Node, inst string, n int) {
	first := r.state.next(n)
	epoch := node.Epoch()
	tries := make([]StateTry, n)
	writes := make([]state.Write, n)
	for i := range n {
		seq := first + uint64(i)
		tries[i] = StateTry{Instance: inst, Key: fmt.Sprintf("chaos.k%02d", seq%stateKeys), Value: stateTag(inst, epoch, seq), Seq: seq, Epoch: epoch}
		writes[i] = state.Write{Key: tries[i].Key, Value: []byte(tries[i].Value)}
		if n > 1 {
			tries[i].Commit, tries[i].Writes = first, n
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*r.maxTTL)
	defer cancel()
	sent := time.Now()
	var rev uint64
	var err error
	if n == 1 {
		rev, err = st.Put(ctx, writes[0].Key, writes[0].Value)
	} else {
		rev, err = st.Commit(ctx, writes...)
	}
	outcome, cause := stateOutcome(err)
	for i := range tries {
		tries[i].Sent, tries[i].Outcome, tries[i].Cause = sent, outcome, cause
		if outcome == Unknown {
			tries[i].Err = err.Error()
		}
		if outcome == Acked {
			tries[i].Revision = rev - uint64(n-1-i) // a batch is stored in one piece
		}
	}
	r.state.add(tries...)
	if errors.Is(err, cluster.ErrBucketConfig) {
		// A recreated bucket does not allow atomic batches (yet).
		_ = st.EnableCommit(ctx)
	}
}

// stateOutcome sorts what a state write returned.
func stateOutcome(err error) (Outcome, string) {
	switch {
	case err == nil:
		return Acked, ""
	case errors.Is(err, state.ErrWriteUncertain): // it wraps ErrNotLeader too
		return Unknown, "uncertain"
	case errors.Is(err, state.ErrFenced):
		return Fenced, ""
	case errors.Is(err, cluster.ErrNotLeader):
		return NotLeader, ""
	case errors.Is(err, context.DeadlineExceeded):
		return Unknown, "timeout"
	case errors.Is(err, cluster.ErrStopped), errors.Is(err, cluster.ErrNotStarted):
		return Unknown, "node stopped"
	case errors.Is(err, cluster.ErrBucketDeleted):
		return Unknown, "bucket deleted"
	case errors.Is(err, cluster.ErrBucketConfig):
		return Unknown, "commit not allowed (bucket recreated)"
	}
	return Unknown, "other"
}

// writerFloat is a number in [0, 1) from the writers' random stream.
func (r *run) writerFloat() float64 {
	r.rngMu.Lock()
	defer r.rngMu.Unlock()
	return r.wrng.Float64()
}
