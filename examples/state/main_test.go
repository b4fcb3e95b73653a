package main

import (
	"strings"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// The example as go run runs it, on its own embedded server: the leader
// steps down, then is killed (the pause needs links), and the counter
// ends equal to the acknowledged increments.
func TestStateCounterAcrossStepDownAndKill(t *testing.T) {
	natstest.CheckLeaks(t)
	var out strings.Builder
	res, err := run(&out, options{nodes: 3, increments: 60})
	check(t, res, err, 60, &out, []string{"steps down", "is not paused", "is killed"}, 3)
}

// Each node connects through a fault proxy, so the leader is also paused:
// its connection stalled until another node leads.
func TestStateCounterAcrossStepDownPauseAndKill(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	var links []link
	for range 3 {
		links = append(links, faultproxy.New(t, srv.Addr()))
	}
	var out strings.Builder
	res, err := run(&out, options{nodes: 3, increments: 80, natsURL: srv.URL(), links: links})
	check(t, res, err, 80, &out, []string{"steps down", "is paused", "delivers what it held", "is killed"}, 4)
}

// check wants a run that acknowledged increments, with a counter within
// the acknowledged and uncertain increments, said, and leaders tenures.
func check(t *testing.T, res result, err error, increments int64, out *strings.Builder, said []string, leaders int) {
	t.Helper()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.acked < increments || res.value < res.acked || res.value > res.acked+res.uncertain {
		t.Errorf("result %+v\n%s", res, out.String())
	}
	for _, s := range said {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output does not say %q:\n%s", s, out.String())
		}
	}
	if n := strings.Count(out.String(), " leads (epoch"); n < leaders {
		t.Errorf("%d tenures, want at least %d:\n%s", n, leaders, out.String())
	}
	t.Logf("%+v\n%s", res, out.String())
}
