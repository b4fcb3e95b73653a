package store

// How a LeaseWatch follows the bucket: one jetstream ordered consumer at
// a time, replaced when it is lost, each checked against the stream's
// incarnation (its creation time).

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// errIncarnationChanged says the consumer just made may sit on a stream
// incarnation other than the one its start was chosen for: make another.
var errIncarnationChanged = errors.New("the bucket's stream is another incarnation")

// followed is one ordered consumer the watch follows.
type followed struct {
	cons jetstream.Consumer
	cc   jetstream.ConsumeContext // nil until consumed
	// verified is the consumer name last checked to live on the watch's
	// incarnation: jetstream renames its consumer when it replaces it.
	verified string
	dead     bool // lost or dropped: what it delivers is not passed on
	dropped  bool
}

// follow makes an ordered consumer on the lease key that starts where the
// watch is: the last entry before Synced, the start of an incarnation
// nothing was delivered from, the entry after the last one delivered. It
// then reads the stream's incarnation: a consumer made on another one is
// deleted (errIncarnationChanged), the watch now starting that one afresh.
func (w *LeaseWatch) follow(ctx context.Context) (*followed, error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{w.filter}}
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
	cons, err := w.s.js.OrderedConsumer(ctx, w.stream, cfg)
	if err != nil {
		return nil, err
	}
	name := cons.CachedInfo().Name
	changed, err := w.incarnationChanged(ctx, nil)
	if err != nil || changed {
		_ = w.s.js.DeleteConsumer(ctx, w.stream, name)
		if err == nil {
			err = errIncarnationChanged
		}
		return nil, err
	}
	return &followed{cons: cons, verified: name}, nil
}

// incarnationChanged reads the stream's creation time. The first one read
// is the watch's incarnation; another one becomes it, nothing delivered
// from it yet, and f (nil: none) is lost.
func (w *LeaseWatch) incarnationChanged(ctx context.Context, f *followed) (bool, error) {
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
	if f != nil {
		w.loseLocked(f)
	}
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
		jetstream.PullHeartbeat(watchHeartbeat), jetstream.PullExpiry(watchExpiry), jetstream.PullMaxMessages(watchBatch),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) { w.onError(f, err) }))
	if err != nil {
		return err
	}
	f.cc = cc
	return nil
}

// deliver passes on what f delivered, in order and once. A message from a
// consumer jetstream made in place of f's last one is passed on only once
// the stream is found to be the same incarnation.
func (w *LeaseWatch) deliver(f *followed, msg jetstream.Msg) {
	md, err := msg.Metadata()
	if err != nil {
		return
	}
	w.mu.Lock()
	verified := f.verified == md.Consumer
	w.mu.Unlock()
	if !verified {
		ctx, cancel := context.WithTimeout(w.ctx, w.s.lookupTimeout)
		changed, err := w.incarnationChanged(ctx, f)
		cancel()
		if err != nil || changed {
			w.lose(f)
			return
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f.verified = md.Consumer
	if f.dead || md.Sequence.Stream <= w.lastSeq {
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
// the watch when the connection is closed. jetstream would replace the
// consumer itself, but resume at the old sequence on a new stream.
func (w *LeaseWatch) onError(f *followed, err error) {
	switch {
	case errors.Is(err, jetstream.ErrConnectionClosed):
		w.cancel()
	case errors.Is(err, jetstream.ErrConsumerDeleted), errors.Is(err, jetstream.ErrNoHeartbeat), errors.Is(err, nats.ErrNoResponders):
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
// or unreachable; false when the watch ended first.
func (w *LeaseWatch) replace() bool {
	wait := 100 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(w.ctx, w.s.lookupTimeout)
		f, err := w.follow(ctx)
		if err == nil {
			if err = w.consume(f); err != nil {
				w.drop(f)
			}
		}
		cancel()
		switch {
		case err == nil:
			return true
		case errors.Is(err, errIncarnationChanged):
			continue
		case w.s.nc.IsClosed():
			return false
		}
		select {
		case <-w.ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, watchRetryMax)
	}
}

// drop stops f and deletes its consumer (best effort) in the background.
// Stopping waits for a reset jetstream may have under way.
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
		if info := f.cons.CachedInfo(); info != nil {
			_ = w.s.js.DeleteConsumer(ctx, w.stream, info.Name)
		}
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
