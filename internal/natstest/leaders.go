package natstest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// metaGroup is the name of the JetStream meta group's Raft node
// (nats-server's defaultMetaGroupName).
const metaGroup = "_meta_"

// MoveStreamLeader steps the leader of stream (account "$G") down, naming
// a member among other than avoid as the one to lead, until one of those
// leads it, and returns that member; it fails the test after 30s. Only
// the members among are asked who leads: one cut off may still deem
// itself the leader of a stream deleted since. nc is on one of them.
func (c *Cluster) MoveStreamLeader(t testing.TB, nc *nats.Conn, stream string, among []int, avoid int) int {
	t.Helper()
	var to string
	for _, i := range among {
		if i != avoid {
			to = c.Server(i).NATS().Name()
			break
		}
	}
	req, err := json.Marshal(server.JSApiLeaderStepdownRequest{Placement: &server.Placement{Preferred: to}})
	if err != nil {
		t.Fatal(err)
	}
	leader := -1
	WaitFor(t, 30*time.Second, func() bool {
		leader = -1
		for _, i := range among {
			if ns := c.Server(i).NATS(); ns != nil && ns.JetStreamIsStreamLeader("$G", stream) {
				leader = i
			}
		}
		if leader != avoid {
			return leader >= 0
		}
		// Unanswered while the stream has no leader: short, and again.
		_, _ = nc.Request(fmt.Sprintf(server.JSApiStreamLeaderStepDownT, stream), req, 500*time.Millisecond)
		return false
	}, "stream %s: no leader other than n%d", stream, avoid)
	return leader
}

// MetaTerm returns member i's current term in the JetStream meta group,
// or 0 while it is shut down. A member cut off from the meta leader
// campaigns, raising its term, every 4-9s (nats-server's election
// timeout); once healed, its next campaign's higher term makes the meta
// leader step down. So a test that needs a healed member to stay behind
// the meta group for a while heals it just after its term rose: it
// campaigns again no sooner than 4s later.
func (c *Cluster) MetaTerm(i int) uint64 {
	ns := c.servers[i].NATS()
	if ns == nil {
		return 0
	}
	rz := ns.Raftz(&server.RaftzOptions{GroupFilter: metaGroup})
	if rz == nil {
		return 0
	}
	for _, groups := range *rz {
		if g, ok := groups[metaGroup]; ok {
			return g.Term
		}
	}
	return 0
}
