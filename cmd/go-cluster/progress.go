package main

import (
	"fmt"
	"sync"
	"time"
)

// spinnerFrames and spinnerInterval draw the spinner.
const (
	spinnerFrames   = `|/-\`
	spinnerInterval = 100 * time.Millisecond
)

// clearLine returns the cursor to the start of the line and erases it.
const clearLine = "\r\033[K"

// waiting shows, while a command waits, a spinner and what it waits for
// on stderr, and returns the function that erases it. It shows nothing
// unless stderr is a terminal, so pipes and files get only the output.
// The returned function is safe to call more than once.
func (e *env) waiting(what string) (done func()) {
	if !e.interactive {
		return func() {}
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	start := e.now()
	go func() {
		defer close(stopped)
		t := time.NewTicker(spinnerInterval)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(e.stderr, "%s%c %s (%.1fs)", clearLine, spinnerFrames[i%len(spinnerFrames)], what, e.now().Sub(start).Seconds())
			select {
			case <-stop:
				fmt.Fprint(e.stderr, clearLine)
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-stopped
		})
	}
}
