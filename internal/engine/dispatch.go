package engine

import (
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"sync"
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
	log *slog.Logger
	obs Metrics

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

func (d *dispatcher) run() {
	defer close(d.done)
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
		return runHook(c.fn)
	}()
	d.obs.ObserveHook(c.name, time.Since(start), err)
	if err != nil {
		d.log.Error("hook failed", "hook", c.name, "error", err, "duration", time.Since(start))
		return
	}
	d.log.Debug("hook done", "hook", c.name, "duration", time.Since(start))
}

// callHook calls the application's hook, a panic made its error, so that
// the event feed is told after it all the same.
func callHook(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panicked: %v", r)
		}
	}()
	return fn()
}

// runHook calls a hook. Its frame on a goroutine's stack is what marks
// a call made from inside a hook (inHook): a hook cannot wait for hooks.
//
//go:noinline
func runHook(fn func() error) error { return fn() }

// runHookEntry is runHook's entry address, as stack frames report it.
var runHookEntry = runtime.FuncForPC(reflect.ValueOf(runHook).Pointer()).Entry()

// inHook says the caller runs inside a hook, this node's or another's: its
// stack holds runHook's frame. Waiting there for hooks to end could wait
// for itself, or for a hook of another node that waits for this one.
func inHook() bool {
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(2, pcs)
		if n == len(pcs) { // the stack may go deeper: look at all of it
			pcs = make([]uintptr, 2*len(pcs))
			continue
		}
		frames := runtime.CallersFrames(pcs[:n])
		for {
			f, more := frames.Next()
			if f.Entry == runHookEntry {
				return true
			}
			if !more {
				return false
			}
		}
	}
}
