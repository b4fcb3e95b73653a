package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestMain makes the directory the CLI is built into once (buildCLI), runs
// more of the tests side by side than go test's default (4 per CPU, as
// internal/agent and internal/runner do), and checks that no goroutine
// outlived them all.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "go-cluster-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cli.dir = dir
	natstest.WaitingParallelism(4)
	natstest.VerifyMain(m, func() { os.RemoveAll(dir) })
}
