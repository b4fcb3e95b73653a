package main

import (
	"sync"
	"sync/atomic"
)

// parallel calls fn(0) to fn(n-1) on up to workers goroutines. After the
// first error no new call starts; it returns that error.
func parallel(n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for !stop.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err; stop.Store(true) })
				}
			}
		})
	}
	wg.Wait()
	return first
}
