package engine

import (
	"bytes"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The dispatcher: hooks run one at a time, in order, off the loop and off
// every lock (E3 in docs/design.md).

// hookCall is one queued hook invocation.
type hookCall struct {
	name    string
	fn      func() error
	started chan struct{} // closed before fn is called; may be nil
	done    chan struct{} // closed after fn returns; may be nil
}

// dispatcher runs hooks one at a time, in the order they were queued, on a
// goroutine of its own, so that no hook runs under a lock, on the renew
// path, or on a NATS callback goroutine.
type dispatcher struct {
	log  *slog.Logger
	obs  Metrics
	goid atomic.Uint64 // the dispatcher goroutine, to tell a call from a hook

	mu     sync.Mutex
	queue  []hookCall
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

// newDispatcher makes a dispatcher; Driver.Run starts it.
func newDispatcher(log *slog.Logger, obs Metrics) *dispatcher {
	return &dispatcher{log: log, obs: obs, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// enqueue adds a call; calls after close are dropped (their done is closed).
func (d *dispatcher) enqueue(c hookCall) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		if c.started != nil {
			close(c.started)
		}
		if c.done != nil {
			close(c.done)
		}
		return
	}
	d.queue = append(d.queue, c)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// close lets the dispatcher finish what is queued and exit.
func (d *dispatcher) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// isCaller says the calling goroutine is the dispatcher's: a hook.
func (d *dispatcher) isCaller() bool { return d.goid.Load() == goroutineID() }

func (d *dispatcher) run() {
	defer close(d.done)
	d.goid.Store(goroutineID())
	for {
		d.mu.Lock()
		if len(d.queue) == 0 {
			closed := d.closed
			d.mu.Unlock()
			if closed {
				return
			}
			<-d.wake
			continue
		}
		c := d.queue[0]
		d.queue[0] = hookCall{}
		d.queue = d.queue[1:]
		d.mu.Unlock()
		d.call(c)
	}
}

func (d *dispatcher) call(c hookCall) {
	if c.done != nil {
		defer close(c.done)
	}
	if c.started != nil {
		close(c.started)
	}
	start := time.Now()
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return c.fn()
	}()
	d.obs.ObserveHook(c.name, time.Since(start), err)
	if err != nil {
		d.log.Error("hook failed", "hook", c.name, "error", err, "duration", time.Since(start))
		return
	}
	d.log.Debug("hook done", "hook", c.name, "duration", time.Since(start))
}

// goroutineID is the runtime's number for the calling goroutine, read from
// the first line of its stack trace ("goroutine 42 [running]:"). Used only
// to tell a call from a hook, which cannot wait for hooks to end.
func goroutineID() uint64 {
	var buf [64]byte
	b := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
