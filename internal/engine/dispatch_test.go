package engine

import (
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"
)

// TestDispatcherRunsInOrderAndSurvivesPanics: hooks run one at a time in
// the order queued (E3), a panic is a failure counted, and nothing runs
// after close.
func TestDispatcherRunsInOrderAndSurvivesPanics(t *testing.T) {
	var failed hookFailures
	d := newDispatcher(slog.New(slog.DiscardHandler), &failed)
	go d.run()
	var got []int
	done := make(chan struct{})
	for i := range 5 {
		d.enqueue(hookCall{name: "h", fn: func() error {
			got = append(got, i)
			if i == 2 {
				panic("hook panic")
			}
			return nil
		}})
	}
	d.enqueue(hookCall{name: "last", fn: func() error { return errors.New("x") }, done: done})
	<-done
	d.close()
	<-d.done
	if !reflect.DeepEqual(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("order %v", got)
	}
	if failed.n != 2 {
		t.Errorf("failures reported = %d, want 2", failed.n)
	}
	late := make(chan struct{})
	d.enqueue(hookCall{name: "after close", fn: func() error { t.Error("ran after close"); return nil }, done: late})
	<-late
}

// hookFailures counts the failed hook calls reported to metrics (only the
// dispatcher's goroutine reports, and the test reads after it is done).
type hookFailures struct {
	noMetrics
	n int
}

func (h *hookFailures) ObserveHook(_ string, _ time.Duration, err error) {
	if err != nil {
		h.n++
	}
}

// TestInHookKnowsAHookByItsStack: a call is from a hook when the hook's
// frame is on its stack, however deep below the hook (E8); a goroutine
// the hook starts, and any other, is not in a hook.
func TestInHookKnowsAHookByItsStack(t *testing.T) {
	d := newDispatcher(slog.New(slog.DiscardHandler), noMetrics{})
	go d.run()
	defer func() { d.close(); <-d.done }()
	if inHook() {
		t.Fatal("inHook() = true on the test's goroutine")
	}
	var direct, deep, spawned bool
	done := make(chan struct{})
	d.enqueue(hookCall{name: "h", done: done, fn: func() error {
		direct = inHook()
		deep = below(200, inHook) // deeper than inHook's first look (64 frames)
		other := make(chan bool)
		go func() { other <- inHook() }()
		spawned = <-other
		return nil
	}})
	<-done
	if !direct || !deep || spawned {
		t.Errorf("inHook: in the hook %v, 200 calls below it %v, on a goroutine it started %v; want true, true, false", direct, deep, spawned)
	}
}

// below calls f n calls deep.
//
//go:noinline
func below(n int, f func() bool) bool {
	if n == 0 {
		return f()
	}
	return below(n-1, f)
}
