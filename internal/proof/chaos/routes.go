package chaos

import (
	"fmt"
	"strings"
	"time"
)

// Route partitions last either a few LeaseTTLs, or long enough for
// JetStream to act on them: its replicas call an election after 4-9s
// without hearing from their leader, and a leader that has heard from no
// quorum for 10s steps down. Those timings do not scale with LeaseTTL.
const (
	longPartitionMin = 4 * time.Second
	longPartitionMax = 12 * time.Second
)

// injectRoutePartition cuts or blackholes the routes between one server
// and the other two, then heals them after a drawn time. The server is the
// bucket stream's leader a third of the time, the JetStream meta leader a
// third of the time, and any server otherwise. Nodes keep their own
// connections to it: a node attached to that server alone reaches a
// JetStream that has lost its quorum, or has lost it without knowing yet.
// Like server shutdowns, it needs every server up and no other partition,
// so that the other two keep a quorum.
func (r *run) injectRoutePartition() string {
	n := len(r.cluster.Servers())
	if r.routesCut || len(r.cluster.URLs()) < n {
		return ""
	}
	i := r.rngIntN(n)
	switch x := r.rng.Float64(); {
	case x < 1.0/3:
		if l := r.cluster.StreamLeader("$G", "KV_"+r.bucket()); l >= 0 {
			i = l
		}
	case x < 2.0/3:
		if l := r.cluster.MetaLeader(); l >= 0 {
			i = l
		}
	}
	roles := r.serverRoles(i)
	blackhole := r.chance(0.5)
	d := r.span(0.5, 3)
	if r.chance(0.5) {
		d = longPartitionMin + time.Duration(r.rng.Float64()*float64(longPartitionMax-longPartitionMin)).Round(time.Millisecond)
	}
	how := "cut"
	for j := range n {
		if j == i {
			continue
		}
		if blackhole {
			r.cluster.BlackholeRoutes(i, j)
		} else {
			r.cluster.CutRoutes(i, j)
		}
	}
	if blackhole {
		how = "blackhole"
	}
	r.routesCut = true
	r.later(d, fmt.Sprintf("routes of n%d", i), func() { r.healRoutes() })
	return fmt.Sprintf("%s the routes of n%d (%s) to the other servers for %v", how, i, roles, d)
}

// healRoutes restores every route between two servers.
func (r *run) healRoutes() {
	n := len(r.cluster.Servers())
	for i := range n {
		for j := i + 1; j < n; j++ {
			r.cluster.HealRoutes(i, j)
		}
	}
	r.routesCut = false
}

// serverRoles describes what server i leads now, for the schedule's log.
func (r *run) serverRoles(i int) string {
	var roles []string
	if r.cluster.StreamLeader("$G", "KV_"+r.bucket()) == i {
		roles = append(roles, "stream leader")
	}
	if r.cluster.MetaLeader() == i {
		roles = append(roles, "meta leader")
	}
	if len(roles) == 0 {
		return "no leader"
	}
	return strings.Join(roles, ", ")
}
