package fenced

import (
	"context"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Watch follows the state keys that are prefix (a valid key) or below it
// (every key when prefix is ""), until ctx ends: first the current value
// of every key, then, once synced is closed, each change as it is stored.
// Each entry is sent on updates as entry makes it (the caller's type);
// updates is closed when ctx ends. Deletions arrive with Deleted set;
// keys deleted before the watch began are not delivered.
func Watch[E any](ctx context.Context, s *State, prefix string, entry func(Entry) E) (updates <-chan E, synced <-chan struct{}, err error) {
	st, err := s.Node.Store()
	if err != nil {
		return nil, nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	kw, err := st.KV().WatchFiltered(wctx, filters(prefix))
	if err != nil {
		cancel()
		return nil, nil, st.Explain(err)
	}
	out, in := make(chan E), make(chan struct{})
	go func() {
		defer close(out)
		defer cancel()
		defer func() { _ = kw.Stop() }()
		follow(wctx, kw, in, func(e Entry) bool {
			select {
			case out <- entry(e):
				return true
			case <-wctx.Done():
				return false
			}
		})
	}()
	return out, in, nil
}

// follow delivers kw's entries until ctx ends, kw ends or deliver says
// stop, closing synced when the current values have all come.
func follow(ctx context.Context, kw jetstream.KeyWatcher, synced chan struct{}, deliver func(Entry) bool) {
	done := false
	for {
		select {
		case e, ok := <-kw.Updates():
			if !ok {
				return
			}
			if e == nil {
				done = true
				close(synced)
				continue
			}
			if !done && e.Operation() != jetstream.KeyValuePut {
				continue // a key deleted before the watch began: not a current value
			}
			if !deliver(Entry{Key: strings.TrimPrefix(e.Key(), KeyPrefix), Value: e.Value(),
				Revision: e.Revision(), Created: e.Created(), Deleted: e.Operation() != jetstream.KeyValuePut}) {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}
