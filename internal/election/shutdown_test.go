package election

import (
	"testing"
	"time"
)

// Every call the machine holds is answered when it stops: a StepDown, a
// ValidateLeadership, a SetMetadata and a step-down request over NATS kept
// behind a request out (here a follower's read-back) get ErrStopped from
// the teardown's StopNow. On main before this (issue 25) the shutdown
// answered only a drain and Stop; a StepDown kept behind an identity
// check returned only because package cluster's node.go also waited on
// the loop's exit.
func TestMachineShutdownAnswersKeptCalls(t *testing.T) {
	m := New(machineTestConfig("a"), BucketFacts{}, 1)
	m.instance = "a"
	at := func(ms int) time.Time { return mBase.Add(time.Duration(ms) * time.Millisecond) }
	for _, s := range followB {
		m.Handle(at(s.ms), s.ev)
	}
	if got := summarizeAll(at(500), m.Handle(at(500), Tick{})); !matchActions(got, []string{"get", "arm -"}) {
		t.Fatalf("no read-back out: %q", got)
	}
	for _, ev := range []Event{
		StepDown{Token: 7},
		Validate{Token: 8},
		SetMetadata{Token: 9},
		Control{Data: []byte(`{}`), Received: at(501), Token: 10},
	} {
		if got := summarizeAll(at(501), m.Handle(at(501), ev)); !matchActions(got, []string{"arm -"}) {
			t.Fatalf("%T was not kept behind the read-back: %q", ev, got)
		}
	}
	got := summarizeAll(at(502), m.StopNow())
	want := []string{"reply 7 ErrStopped", "reply 8 ErrStopped", "reply 9 ErrStopped", "control refused", "finished"}
	if !matchActions(got, want) {
		t.Fatalf("stopNow:\n got  %q\n want %q", got, want)
	}
}
