package store

// How a LeaseWatch follows the bucket: one ephemeral pull consumer at a
// time, made by the watch, checked against the stream's incarnation (its
// creation time) and replaced by the watch alone when it is lost.

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// errIncarnationChanged says the consumer just made may sit on a stream
// incarnation other than the one its start was chosen for: make another.
var errIncarnationChanged = errors.New("the bucket's stream is another incarnation")

// followed is one consumer the watch follows.
type followed struct {
	cons jetstream.Consumer
	name string
	cc   jetstream.ConsumeContext // nil until consumed
	// delivered is the consumer sequence of its last delivery: a gap
	// means a message lost on the way (a slow subscription), and the
	// consumer is replaced from the last entry passed on.
	delivered uint64
	// missed is when jetstream last reported its heartbeats missed, zero
	// since a delivery.
	missed  time.Time
	dead    bool // lost or dropped: what it delivers is not passed on
	dropped bool
}

// consumerConfig is the watch's consumer starting at start (the deliver
// policy and sequence): what a jetstream ordered consumer makes, without
// the ordered consumer, which replaces its consumer itself on the errors
// on which the watch does (issue 43: a server too slow for heartbeats
// then had every watch on it make two consumers at once, and again
// while the creations timed out).
func consumerConfig(name, filter string, start jetstream.ConsumerConfig) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Name:              name,
		DeliverPolicy:     start.DeliverPolicy,
		OptStartSeq:       start.OptStartSeq,
		FilterSubject:     filter,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: consumerInactive,
		Replicas:          1,
		MemoryStorage:     true,
	}
}

// follow makes the consumer name on the lease key that starts where the
// watch is: the last entry before Synced, the start of an incarnation
// nothing was delivered from, the entry after the last one delivered. It
// then reads the stream's incarnation: a consumer made on another one is
// deleted (errIncarnationChanged), the watch now starting that one afresh
// under a new name. Asked again under the same name, after a creation the
// server carried out too late to answer, the server hands over the
// consumer it made: none is left behind. Each request is bounded by
// timeout on its own: two in a row under one bound would never both be
// answered by a server slower than half of it.
func (w *LeaseWatch) follow(ctx context.Context, timeout time.Duration, name string) (*followed, error) {
	var cfg jetstream.ConsumerConfig
	w.mu.Lock()
	switch {
	case !w.synced:
		cfg.DeliverPolicy = jetstream.DeliverLastPerSubjectPolicy
	case w.lastSeq == 0:
		cfg.DeliverPolicy = jetstream.DeliverAllPolicy
	default:
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = w.lastSeq + 1
	}
	w.mu.Unlock()
	cfg = consumerConfig(name, w.filter, cfg)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	cons, err := w.s.js.CreateConsumer(rctx, w.stream, cfg)
	cancel()
	if err != nil {
		return nil, err
	}
	rctx, cancel = context.WithTimeout(ctx, timeout)
	changed, err := w.incarnationChanged(rctx)
	cancel()
	if err != nil || changed {
		rctx, cancel = context.WithTimeout(ctx, timeout)
		_ = w.s.js.DeleteConsumer(rctx, w.stream, name)
		cancel()
		if err == nil {
			err = errIncarnationChanged
		}
		return nil, err
	}
	return &followed{cons: cons, name: name}, nil
}

// incarnationChanged reads the stream's creation time. The first one read
// is the watch's incarnation; another one becomes it, nothing delivered
// from it yet.
func (w *LeaseWatch) incarnationChanged(ctx context.Context) (bool, error) {
	st, err := w.s.js.Stream(ctx, w.stream)
	if err != nil {
		return false, err
	}
	created := st.CachedInfo().Created
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.created.IsZero() || created.Equal(w.created) {
		w.created = created
		return false, nil
	}
	w.created, w.lastSeq = created, 0
	return true, nil
}

// consume makes f the consumer followed and starts it. Synced goes out
// first, before any entry, when its info shows nothing pending.
func (w *LeaseWatch) consume(f *followed) error {
	info := f.cons.CachedInfo()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cur = f
	if !w.synced {
		w.initPending, w.received = info.NumPending, 0
		if info.NumPending == 0 {
			w.synced = true
			w.send(LeaseUpdate{Synced: true, Consumer: info.Name})
		}
	}
	cc, err := f.cons.Consume(func(msg jetstream.Msg) { w.deliver(f, msg) },
		jetstream.PullHeartbeat(w.heartbeat), jetstream.PullExpiry(watchExpiry), jetstream.PullMaxMessages(watchBatch),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) { w.onError(f, err) }))
	if err != nil {
		return err
	}
	f.cc = cc
	return nil
}

// deliver passes on what f delivered, in order and once. A gap in the
// consumer's sequence loses f: it is replaced from the entry after the
// last one passed on.
func (w *LeaseWatch) deliver(f *followed, msg jetstream.Msg) {
	md, err := msg.Metadata()
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if f.dead {
		return
	}
	if md.Sequence.Consumer != f.delivered+1 {
		w.loseLocked(f)
		return
	}
	f.delivered, f.missed = md.Sequence.Consumer, time.Time{}
	if md.Sequence.Stream <= w.lastSeq {
		return
	}
	w.lastSeq = md.Sequence.Stream
	w.send(toUpdate(msg, md))
	if !w.synced {
		w.received++
		if w.received >= w.initPending || md.NumPending == 0 {
			w.synced = true
			w.send(LeaseUpdate{Synced: true, Consumer: md.Consumer})
		}
	}
}

// onError replaces f when jetstream reports its consumer lost, and ends
// the watch when the connection is closed. Heartbeats missed once are no
// loss: jetstream pulls again, and a server too busy to send them in
// time is not asked for a consumer more (a loss the server knows of is
// told at once: deleted, no responders). Missed again, with nothing
// delivered since, they are.
func (w *LeaseWatch) onError(f *followed, err error) {
	switch {
	case errors.Is(err, jetstream.ErrConnectionClosed):
		w.cancel()
	case errors.Is(err, jetstream.ErrNoHeartbeat):
		w.mu.Lock()
		defer w.mu.Unlock()
		now := time.Now()
		if !f.missed.IsZero() && now.Sub(f.missed) <= 3*w.heartbeat {
			w.loseLocked(f)
			return
		}
		f.missed = now
	case errors.Is(err, jetstream.ErrConsumerDeleted), errors.Is(err, nats.ErrNoResponders):
		w.lose(f)
	}
}

// lose marks f lost and has run replace it.
func (w *LeaseWatch) lose(f *followed) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.loseLocked(f)
}

func (w *LeaseWatch) loseLocked(f *followed) {
	if f == nil || f.dead {
		return
	}
	f.dead = true
	select {
	case w.lost <- f: // one live consumer at a time: the slot is free
	default:
	}
}

// run replaces lost consumers until the watch ends (Stop, life's end, the
// connection closed), then cleans up. After a reconnect it replaces the
// consumer too: the stream may have been made anew meanwhile.
func (w *LeaseWatch) run() {
	defer close(w.finished)
	statuses := w.s.nc.StatusChanged(nats.CONNECTED, nats.CLOSED)
	defer w.s.nc.RemoveStatusListener(statuses)
	defer w.teardown()
	for !w.s.nc.IsClosed() {
		select {
		case <-w.ctx.Done():
			return
		case st := <-statuses:
			if st == nats.CLOSED {
				return
			}
			w.lose(w.current())
		case f := <-w.lost:
			w.drop(f)
			if !w.replace() {
				return
			}
		}
	}
}

// current is the consumer followed now.
func (w *LeaseWatch) current() *followed {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur
}

// replace follows the bucket again, retrying while the stream is missing
// or unreachable; false when the watch ended first. The waits between
// attempts double, each drawn at random from its upper half: up to
// watchRetryMax while the stream is missing (made again soon, maybe), up
// to watchSlowRetryMax while the server does not answer in time, so
// that the watches of a server too busy to answer do not all ask again
// at once and keep it so.
func (w *LeaseWatch) replace() bool {
	wait := 100 * time.Millisecond
	name := nuid.Next()
	for {
		f, err := w.follow(w.ctx, w.s.lookupTimeout, name)
		if err == nil {
			if err = w.consume(f); err != nil {
				w.drop(f) // deleted in the background: the next one is another
				name = nuid.Next()
			}
		}
		switch {
		case err == nil:
			return true
		case errors.Is(err, errIncarnationChanged):
			name = nuid.Next()
			continue
		case w.s.nc.IsClosed():
			return false
		}
		limit := watchRetryMax
		if errors.Is(err, context.DeadlineExceeded) {
			limit = watchSlowRetryMax
		}
		wait = min(2*wait, limit)
		select {
		case <-w.ctx.Done():
			return false
		case <-time.After(wait/2 + rand.N(wait/2+1)):
		}
	}
}

// drop stops f and deletes its consumer (best effort) in the background.
func (w *LeaseWatch) drop(f *followed) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if f.dropped {
		return
	}
	f.dead, f.dropped = true, true
	cc := f.cc
	w.dropping.Add(1)
	go func() {
		defer w.dropping.Done()
		if cc != nil {
			cc.Stop()
		}
		if w.s.nc.IsClosed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), consumerDeleteTimeout)
		defer cancel()
		_ = w.s.js.DeleteConsumer(ctx, w.stream, f.name)
	}()
}

// teardown ends the watch: its consumer dropped, the channel closed.
func (w *LeaseWatch) teardown() {
	w.cancel()
	if f := w.current(); f != nil {
		w.drop(f)
	}
	w.dropping.Wait()
	w.end()
}
