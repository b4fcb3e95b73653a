package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// Every call the machine holds is answered when it stops: a StepDown, a
// ValidateLeadership, a SetMetadata and a step-down request over NATS kept
// behind a request out (here a follower's read-back) get ErrStopped from
// the teardown's stopNow. On main before this (issue 25) the shutdown
// answered only a drain and Stop; a StepDown kept behind an identity
// check returned only because node.go also waited on the loop's exit.
func TestMachineShutdownAnswersKeptCalls(t *testing.T) {
	m := newMachine(machineTestConfig("a"), true, bucketFacts{}, 1)
	m.instance = "a"
	at := func(ms int) time.Time { return mBase.Add(time.Duration(ms) * time.Millisecond) }
	for _, s := range followB {
		m.handle(at(s.ms), s.ev)
	}
	if got := summarizeAll(at(500), m.handle(at(500), evTick{})); !matchActions(got, []string{"get", "arm -"}) {
		t.Fatalf("no read-back out: %q", got)
	}
	for _, ev := range []mEvent{
		evStepDown{token: 7},
		evValidate{token: 8},
		evSetMetadata{token: 9},
		evControl{data: []byte(`{}`), received: at(501), token: 10},
	} {
		if got := summarizeAll(at(501), m.handle(at(501), ev)); !matchActions(got, []string{"arm -"}) {
			t.Fatalf("%T was not kept behind the read-back: %q", ev, got)
		}
	}
	got := summarizeAll(at(502), m.stopNow())
	want := []string{"reply 7 ErrStopped", "reply 8 ErrStopped", "reply 9 ErrStopped", "control refused", "finished"}
	if !matchActions(got, want) {
		t.Fatalf("stopNow:\n got  %q\n want %q", got, want)
	}
}

// The same on a running node: a follower's StepDown kept behind a read
// that does not come back (its link blackholed, RequestTimeout long) is
// answered with ErrStopped when Stop gives up waiting, by the machine
// itself (TestMachineShutdownAnswersKeptCalls), not only by node.go's
// wait on the loop's exit.
func TestStepDownKeptBehindARequestIsAnsweredAtStop(t *testing.T) {
	srv, rec, id := setup(t)
	a := startNode(t, stableConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	proxy := faultproxy.New(t, srv.Addr())
	bcfg := stableConfig(id, "b", proxy.URL())
	bcfg.LeaseTTL, bcfg.RenewInterval = 60*time.Second, 15*time.Second
	bcfg.RequestTimeout = 20 * time.Second // a read out stays out
	b := startNode(t, bcfg, rec, nil)
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.Leader() == "a" }, "b did not follow a")

	proxy.Blackhole() // b's read-back of a's stalled record goes out and hangs
	stepCtx, cancelStep := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelStep()
	var stepped *lifeCall
	natstest.WaitFor(t, 10*time.Second, func() bool {
		stepped = lifeGo(func() error { return b.StepDown(stepCtx) })
		return !stepped.within(100 * time.Millisecond) // kept behind the read
	}, "b answered every StepDown at once: no request ever out")

	stopCtx, cancelStop := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelStop()
	_ = b.Stop(stopCtx) // gives up on the read: the teardown's stopNow
	if !stepped.within(5 * time.Second) {
		t.Fatal("StepDown kept behind a request was not answered 5s after Stop")
	}
	if !errors.Is(stepped.err, ErrStopped) {
		t.Errorf("StepDown = %v, want ErrStopped", stepped.err)
	}
	proxy.Restore()
}
