package main

import (
	"strings"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// The example on its own embedded server: the leader steps down halfway,
// and the counter ends equal to the acknowledged increments.
func TestStateCounterAcrossStepDown(t *testing.T) {
	natstest.CheckLeaks(t)
	var out strings.Builder
	res, err := run(&out, options{nodes: 3, increments: 60})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.acked < 60 || res.value < res.acked || res.value > res.acked+res.uncertain {
		t.Errorf("result %+v\n%s", res, out.String())
	}
	if !strings.Contains(out.String(), "steps down") || strings.Count(out.String(), " leads (epoch") < 2 {
		t.Errorf("no handover under the increments:\n%s", out.String())
	}
	t.Log(out.String())
}
