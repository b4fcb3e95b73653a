package cluster

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestNoOpHooks(t *testing.T) {
	t.Parallel()
	var h Hooks = NoOpHooks{}
	if h.OnBecomeLeader(context.Background()) != nil || h.OnLoseLeadership(context.Background()) != nil ||
		h.OnLeaderChange(context.Background(), "x") != nil {
		t.Error("NoOpHooks returned an error")
	}
	var empty Hooks = HookFuncs{}
	if empty.OnBecomeLeader(context.Background()) != nil || empty.OnLoseLeadership(context.Background()) != nil ||
		empty.OnLeaderChange(context.Background(), "x") != nil {
		t.Error("empty HookFuncs returned an error")
	}
}

func TestComposeHooksOrderAndErrors(t *testing.T) {
	t.Parallel()
	var calls []string
	mk := func(name string, fail bool) Hooks {
		return HookFuncs{
			BecomeLeader: func(context.Context) error {
				calls = append(calls, "become:"+name)
				if fail {
					panic("boom")
				}
				return nil
			},
			LoseLeadership: func(context.Context) error {
				calls = append(calls, "lose:"+name)
				if fail {
					return errors.New("lose failed")
				}
				return nil
			},
			LeaderChange: func(_ context.Context, id string) error {
				calls = append(calls, "leader:"+name+":"+id)
				return nil
			},
		}
	}
	h := ComposeHooks(mk("app", false), nil, mk("health", true), mk("vip", false))
	err := h.OnBecomeLeader(context.Background())
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Errorf("become error = %v, want the panic as an error", err)
	}
	sentinel := h.OnLoseLeadership(context.Background())
	if sentinel == nil || !strings.Contains(sentinel.Error(), "lose failed") {
		t.Errorf("lose error = %v", sentinel)
	}
	_ = h.OnLeaderChange(context.Background(), "n1")
	want := []string{
		"become:app", "become:health", "become:vip",
		"lose:vip", "lose:health", "lose:app",
		"leader:app:n1", "leader:health:n1", "leader:vip:n1",
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls\n got %v\nwant %v", calls, want)
	}
}
