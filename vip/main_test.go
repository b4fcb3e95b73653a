package vip

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks, after all tests, that no goroutine is left behind (the
// keepers, netlink subscriptions and captures all stop at Release or
// cleanup). Tests that start goroutines also check on their own.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
