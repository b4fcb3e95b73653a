package agent

// Standings: every agent of a cluster announces, on one subject, its
// priority, whether its checks pass and whether it leads, so that a node
// of lower priority can leave a first election to a ready one of higher
// priority (deference.go). Plain NATS messages, not KV: a standing is
// only worth what it says while its agent keeps saying it.

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// PrioritySubject is where every agent of cluster clusterID announces its
// Standing: "cluster.<ClusterID>.agent.priority". Each agent publishes and
// subscribes there: NATS permissions must allow both.
func PrioritySubject(clusterID string) string {
	return "cluster." + clusterID + ".agent.priority"
}

// Standing is what an agent announces of its node in a cluster, every
// lease_ttl/4 and at once when it becomes or stops being leader.
type Standing struct {
	Node string `json:"node"`
	// Priority is the node's priority now: the file's, less the weights
	// of its failing weighted checks.
	Priority int `json:"priority"`
	// Ready: its checks that are not weighted pass and it is not in
	// maintenance, so it campaigns.
	Ready bool `json:"ready"`
	// Leading: it holds the lease.
	Leading bool `json:"leading"`
	// Yielding: it stepped down while connected less than a lease_ttl
	// ago, and its election keeps it out for that long (the library's
	// Cooldown): nobody waits for it.
	Yielding bool `json:"yielding,omitempty"`
	// VIPFailed: its last tenure could not hold a VIP and it has not
	// held it since; it leads only when nobody else can (vipSet.failed),
	// so nobody waits for it.
	VIPFailed bool `json:"vip_failed,omitempty"`
}

// heardStanding is a peer's last Standing and when it arrived, by the
// wall clock and by the online clock.
type heardStanding struct {
	Standing
	at, onlineAt time.Time
}

// standings announces this node's Standing and keeps the peers' last
// ones. A peer is live while its last Standing is younger than live on
// the online clock (onlineclock.go), and leads while it is younger than
// live on the wall clock: a leader cut off with this node may have lost
// its tenure meanwhile, but it is still there.
type standings struct {
	nc       *nats.Conn
	self     string
	log      *slog.Logger
	every    time.Duration // announcement interval: lease_ttl/4
	live     time.Duration // a Standing counts this long: lease_ttl/2
	cool     time.Duration // how long a node that stepped down yields: lease_ttl
	own      func() Standing
	poke     chan struct{}
	sub      *nats.Subscription
	clock    *onlineClock
	status   chan nats.Status // the connection's changes, for the clock
	cancel   context.CancelFunc
	done     chan struct{} // closed when announce has returned
	followed chan struct{} // closed when follow has returned

	mu    sync.Mutex
	heard map[string]heardStanding
}

// startStandings subscribes to the cluster's standings and announces own
// every lease_ttl/4 (and at each poke) until stop. A subscription refused
// (permissions) is logged: the node then defers to nobody.
func startStandings(nc *nats.Conn, clusterID, self string, ttl time.Duration, own func() Standing, log *slog.Logger) *standings {
	ctx, cancel := context.WithCancel(context.Background())
	s := &standings{nc: nc, self: self, log: log, every: ttl / 4, live: ttl / 2, cool: ttl, own: own,
		poke: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{}), heard: map[string]heardStanding{},
		clock: &onlineClock{grace: ttl / 4}, status: nc.StatusChanged(), followed: make(chan struct{})}
	go s.follow()
	sub, err := nc.Subscribe(PrioritySubject(clusterID), s.receive)
	if err != nil {
		log.Warn("cannot hear the other agents' priorities: a first election is not left to a node of higher priority", "subject", PrioritySubject(clusterID), "err", err)
	} else {
		s.sub = sub
	}
	go s.announce(ctx, PrioritySubject(clusterID))
	return s
}

// receive keeps a peer's Standing.
func (s *standings) receive(msg *nats.Msg) {
	var st Standing
	if json.Unmarshal(msg.Data, &st) != nil || st.Node == "" || st.Node == s.self {
		return
	}
	now := time.Now()
	s.mu.Lock()
	s.heard[st.Node] = heardStanding{Standing: st, at: now, onlineAt: s.clock.now(now)}
	s.mu.Unlock()
}

// follow feeds the connection's changes to the online clock until stop
// removes the listener.
func (s *standings) follow() {
	defer close(s.followed)
	for st := range s.status {
		if st == nats.CONNECTED {
			s.clock.connected(time.Now())
		} else {
			s.clock.disconnected(time.Now())
		}
	}
}

// announce publishes own every interval and at each poke; a node that
// stops leading while connected yields for a lease_ttl.
func (s *standings) announce(ctx context.Context, subject string) {
	defer close(s.done)
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	var wasLeading bool
	var yieldUntil time.Time
	for {
		st := s.own()
		now := time.Now()
		if wasLeading && !st.Leading && s.nc.IsConnected() {
			yieldUntil = now.Add(s.cool)
		}
		wasLeading = st.Leading
		st.Yielding = now.Before(yieldUntil)
		data, _ := json.Marshal(st) // a Standing always encodes
		_ = s.nc.Publish(subject, data)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.poke:
		}
	}
}

// changed asks for an announcement now (leadership changed).
func (s *standings) changed() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// peers are the live peers' standings at wall, with the online time.
func (s *standings) peers(wall time.Time) (online time.Time, out []Standing) {
	online = s.clock.now(wall)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.heard {
		if online.Sub(h.onlineAt) >= s.live {
			continue
		}
		st := h.Standing
		st.Leading = st.Leading && wall.Sub(h.at) < s.live
		out = append(out, st)
	}
	return online, out
}

// stop ends the announcements and the subscription.
func (s *standings) stop() {
	s.cancel()
	<-s.done
	s.nc.RemoveStatusListener(s.status)
	<-s.followed
	if s.sub != nil {
		_ = s.sub.Unsubscribe()
	}
}
