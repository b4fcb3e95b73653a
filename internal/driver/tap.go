package driver

import (
	"sync"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// tap keeps the last entries the watch delivered, for a write that asks
// how it landed (Write.Landing): the loop notes each entry as it feeds
// it, the write's goroutine looks for its revision.
type tap struct {
	mu      sync.Mutex
	recent  [4]election.KVEntry
	next    int
	changed chan struct{} // closed at the next note
}

func newTap() *tap { return &tap{changed: make(chan struct{})} }

// note keeps e and wakes whoever waits for an entry.
func (t *tap) note(e election.KVEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recent[t.next] = e
	t.next = (t.next + 1) % len(t.recent)
	close(t.changed)
	t.changed = make(chan struct{})
}

// find returns the entry delivered at rev, if it is among the last ones;
// else a channel closed at the next note.
func (t *tap) find(rev uint64) (*election.KVEntry, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.recent {
		if e.Rev == rev && rev != 0 {
			return &e, nil
		}
	}
	return nil, t.changed
}
