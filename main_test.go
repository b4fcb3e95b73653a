package cluster

import (
	"testing"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestMain runs the tests with more of them side by side than go test's
// default (GOMAXPROCS) unless -parallel is given, and then checks that no
// goroutine outlived them all (the backstop to each test's CheckLeaks).
func TestMain(m *testing.M) {
	natstest.WaitingParallelism()
	natstest.VerifyMain(m)
}
