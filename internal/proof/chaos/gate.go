package chaos

import (
	"sync"
	"time"
)

// gate stalls a node's hooks: while closed, every hook call waits at its
// start. It opens on its own after maxStall, so that a forgotten stall
// cannot wedge a run.
type gate struct {
	mu     sync.Mutex
	closed chan struct{} // nil while open; closed when the gate opens
}

const maxStall = time.Minute

// close makes hook calls wait until open.
func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed == nil {
		g.closed = make(chan struct{})
	}
}

// open releases waiting hook calls; it is idempotent.
func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed != nil {
		close(g.closed)
		g.closed = nil
	}
}

// wait blocks while the gate is closed.
func (g *gate) wait() {
	g.mu.Lock()
	ch := g.closed
	g.mu.Unlock()
	if ch == nil {
		return
	}
	t := time.NewTimer(maxStall)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}
