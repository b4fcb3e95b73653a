package store

// The lease watch: the lease key's current value, then every change, each
// delivery naming the JetStream consumer that delivered it. A consumer
// lives on one incarnation of the bucket's stream and dies with it, so a
// consumer name ties what it delivered to that incarnation.

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

const (
	// watchHeartbeat is the least idle heartbeat of the watch's pull
	// requests, and watchHeartbeatMax jetstream's most (PaceWatch):
	// jetstream reports them missed after two (10s at least); the watch
	// takes its consumer for lost when they are missed twice in a row
	// (onError).
	watchHeartbeat    = 5 * time.Second
	watchHeartbeatMax = 30 * time.Second
	// watchExpiry and watchBatch: one pull request lasts an hour and asks
	// for a million messages, so that a follower in a steady cluster sends
	// nothing (jetstream pulls again at half the batch or at expiry; its
	// defaults, 30 s and 500, had every node send a request every 30 s).
	watchExpiry = time.Hour
	watchBatch  = 1 << 20
	// watchBuffer is the channel's room. Until the driver's loop takes
	// the watch in, the channel holds the current value and Synced (Watch
	// itself may send Synced before it returns, with nobody reading: the
	// room must not be 0); after, the loop reads it whenever it is not
	// handling another event, and the lease key changes about once per
	// renewal. Room does not decide what the loop sees: on a full
	// channel send waits (w.mu held) until the loop reads or the watch
	// stops; no update is dropped, merged or reordered. The wait holds
	// up jetstream's delivery of the consumer's messages (nats.go queues
	// up to 500,000 or 64 MB) and heartbeats: after two missed (10 s)
	// jetstream reports the consumer lost, and the watch replaces it
	// from the entry after the last one delivered. The loop never takes
	// w.mu, so it is never the one waiting. 256, the KV watcher's, cost
	// 16 KiB a Node (issue 43).
	watchBuffer = 4
	// watchRetryMax caps the wait between attempts to follow the bucket
	// again once its consumer is lost (the stream may be gone for a
	// while); watchSlowRetryMax the wait after an attempt the server did
	// not answer in time (replace).
	watchRetryMax     = time.Second
	watchSlowRetryMax = 10 * time.Second
	// consumerInactive: the server deletes a watch's consumer nobody has
	// pulled from for this long (one whose creation was answered too late,
	// one a crashed node left), as jetstream's ordered consumer has it.
	consumerInactive = 5 * time.Minute
	// consumerDeleteTimeout bounds the best-effort deletion of a consumer
	// the watch drops (the server removes an idle one on its own).
	consumerDeleteTimeout = 5 * time.Second
)

// LeaseUpdate is one delivery of a LeaseWatch.
type LeaseUpdate struct {
	// Entry is the lease key's entry: Rev (stream sequence), Op and
	// Value; zero when Synced.
	Entry election.KVEntry
	// Synced says the key's current value has been delivered, or the key
	// has none: once per watch, before or after its entry as it happens.
	Synced bool
	// Consumer is the name of the JetStream consumer that delivered it
	// (for Synced: the consumer whose info or message showed the current
	// value).
	Consumer string
}

// LeaseWatch follows the lease key through ephemeral pull consumers of
// its own, one at a time. It replaces the consumer when it is lost
// (deleted, heartbeats missed, no responders, a gap in its sequence, a
// reconnect) or the stream is found to be another incarnation, so that it
// resumes at the right place: after the last entry delivered on the same
// incarnation, at the start of a new one.
type LeaseWatch struct {
	s       *Store
	updates chan LeaseUpdate
	// ctx lasts as long as the watch: cancelled by Stop, at life's end
	// or when the connection is closed.
	ctx       context.Context
	cancel    context.CancelFunc
	finished  chan struct{}  // closed once run has cleaned up
	lost      chan *followed // a consumer to replace; run reads it
	dropping  sync.WaitGroup // consumers being stopped
	stream    string         // the bucket's stream
	filter    string         // the lease key's subject
	heartbeat time.Duration  // the store's (PaceWatch), else watchHeartbeat

	mu          sync.Mutex
	cur         *followed // the consumer followed now
	created     time.Time // the stream incarnation followed
	lastSeq     uint64    // the last entry delivered on it; 0 for none
	synced      bool
	initPending uint64 // entries pending at the consumer's creation, until synced
	received    uint64 // entries delivered by it, until synced
	closed      bool   // updates is closed
}

// Watch follows the lease key: the current value first, then Synced,
// then every change. Only its creation is bounded, by timeout; the watch
// lasts until Stop, life's end or the connection's close.
func (s *Store) Watch(life context.Context, timeout time.Duration) (*LeaseWatch, error) {
	w := &LeaseWatch{
		s:         s,
		updates:   make(chan LeaseUpdate, watchBuffer),
		finished:  make(chan struct{}),
		lost:      make(chan *followed, 1),
		stream:    wire.KVStream(s.bucket),
		filter:    wire.KVSubject(s.bucket, wire.LeaseKey),
		heartbeat: cmp.Or(s.watchHeartbeat, watchHeartbeat),
	}
	w.ctx, w.cancel = context.WithCancel(life)
	ctx, cancel := context.WithTimeout(w.ctx, timeout)
	defer cancel()
	f, err := w.follow(ctx, timeout, nuid.Next())
	for errors.Is(err, errIncarnationChanged) { // made anew between the consumer and the stream info
		f, err = w.follow(ctx, timeout, nuid.Next())
	}
	if err == nil {
		if err = w.consume(f); err != nil {
			w.drop(f)
			w.dropping.Wait()
		}
	}
	if err != nil {
		w.cancel()
		return nil, s.Explain(err)
	}
	go w.run()
	return w, nil
}

// PaceWatch sets the lease watch's idle heartbeat from the cluster's
// RenewInterval: one and a half renewals, from watchHeartbeat to
// watchHeartbeatMax, so that a watch hears heartbeats only when no
// renewal came. A heartbeat shorter than the renewals has the server send
// one on every consumer between every two renewals: at renewals every
// 10 s, 3,000 a second for 10,000 clusters, more than the renewals'
// deliveries (issue 43). Call it before Watch.
func (s *Store) PaceWatch(renew time.Duration) {
	s.watchHeartbeat = min(max(renew*3/2, watchHeartbeat), watchHeartbeatMax)
}

// Updates delivers the watch's updates; it is closed when the watch ends
// for good (Stop, the connection closed, the life ctx done).
func (w *LeaseWatch) Updates() <-chan LeaseUpdate { return w.updates }

// Stop ends the watch. It returns at once: stopping the consumer and
// deleting it (a request that may wait for a server that does not answer)
// go on in a goroutine counted in wg. Updates not yet read are dropped.
func (w *LeaseWatch) Stop(wg *sync.WaitGroup) {
	wg.Add(1)
	w.cancel()
	go func() {
		defer wg.Done()
		<-w.finished
	}()
}

// send puts u on the channel, waiting for room until the watch is
// stopped; w.mu is held, so that updates keep their order.
func (w *LeaseWatch) send(u LeaseUpdate) {
	if w.closed {
		return
	}
	select {
	case w.updates <- u:
	case <-w.ctx.Done():
	}
}

// end closes the channel for good.
func (w *LeaseWatch) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.updates)
	}
}

// toUpdate is a delivered message as the lease key's entry, its
// operation read from the headers as nats.go's KV watcher reads them.
func toUpdate(msg jetstream.Msg, md *jetstream.MsgMetadata) LeaseUpdate {
	op := election.Put
	h := msg.Headers()
	if kvop := h.Get("KV-Operation"); kvop != "" {
		switch kvop {
		case "DEL":
			op = election.Delete
		case "PURGE":
			op = election.Purge
		}
	} else {
		switch h.Get(jetstream.MarkerReasonHeader) {
		case "MaxAge", "Purge":
			op = election.Purge
		case "Remove":
			op = election.Delete
		}
	}
	return LeaseUpdate{Entry: election.KVEntry{Rev: md.Sequence.Stream, Op: op, Value: msg.Data()}, Consumer: md.Consumer}
}
