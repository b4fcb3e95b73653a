package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// The same on a running node: a follower's StepDown kept behind a read
// that does not come back (its link blackholed, RequestTimeout long) is
// answered with ErrStopped when Stop gives up waiting, by the machine
// itself (internal/election's TestMachineShutdownAnswersKeptCalls), not only by node.go's
// wait on the loop's exit.
func TestStepDownKeptBehindARequestIsAnsweredAtStop(t *testing.T) {
	t.Parallel()
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
