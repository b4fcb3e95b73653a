package cluster

import (
	"testing"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestMain runs the tests with more of them side by side than go test's
// default (GOMAXPROCS) unless -parallel is given, and then checks that no
// goroutine outlived them all (the backstop to each test's CheckLeaks).
//
// 8 per CPU: one at a time under -race these tests used 88 s of CPU in
// 720 s, and 16 at a time on 2 cores keep 1.1 of them busy; the waits,
// not the CPU, stay the limit (docs/testing.md has the figures).
func TestMain(m *testing.M) {
	natstest.WaitingParallelism(8)
	natstest.VerifyMain(m)
}
