package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// failingHooks fails OnBecomeLeader with err.
type failingHooks struct {
	NoOpHooks
	err error
}

func (f failingHooks) OnBecomeLeader(context.Context) error { return f.err }

// TestComposedHooksNestedNameTheHookOnce: hooks composed of composed
// hooks (the agent's VIPs inside its member's hooks inside the node's)
// name the failing hook once, and keep the error for errors.Is. On main
// each level wrapped it again: "hook 0: hook 0: hook 0: boom" (issue 41,
// item 9).
func TestComposedHooksNestedNameTheHookOnce(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	inner := ComposeHooks(failingHooks{err: boom}, NoOpHooks{})
	h := ComposeHooks(ComposeHooks(NoOpHooks{}, inner), NoOpHooks{})
	err := h.OnBecomeLeader(context.Background())
	if !errors.Is(err, boom) {
		t.Fatalf("error %v does not wrap boom", err)
	}
	if got := err.Error(); strings.Count(got, "hook ") != 1 {
		t.Fatalf("error %q: want the hook named once", got)
	}
}
