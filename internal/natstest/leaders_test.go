package natstest

import (
	"testing"
	"time"
)

// TestMetaTermRisesOnAMemberCutOff: a member cut off from the meta leader
// campaigns, raising its meta term, within nats-server's election timeout
// (4-9s); one that still hears the leader does not.
func TestMetaTermRisesOnAMemberCutOff(t *testing.T) {
	t.Parallel() // each its own cluster; it waits on the servers' elections
	CheckLeaks(t)
	c := runRouteProxied(t)
	l := c.MetaLeader()
	if l < 0 {
		t.Fatal("no meta leader")
	}
	z := (l + 1) % 3
	before, leaders := c.MetaTerm(z), c.MetaTerm(l)
	if before == 0 || leaders == 0 {
		t.Fatalf("meta terms %d (n%d) and %d (n%d); want both above 0", before, z, leaders, l)
	}
	for j := range 3 {
		if j != z {
			c.CutRoutes(z, j)
		}
	}
	WaitFor(t, 15*time.Second, func() bool { return c.MetaTerm(z) > before }, "n%d, cut off, kept meta term %d", z, before)
	if got := c.MetaTerm(l); got != leaders || c.MetaLeader() != l {
		t.Fatalf("the meta leader n%d is now n%d at term %d; want n%d still leading at term %d", l, c.MetaLeader(), got, l, leaders)
	}
}
