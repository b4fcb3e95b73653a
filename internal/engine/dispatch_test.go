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
