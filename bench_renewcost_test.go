package cluster

// What a renewal costs the server (issue 43): one leader and two followers
// on an embedded server, every message the server receives from each of
// them over a steady window of many renewal periods, by subject class.
// It runs only when -renewcost.periods is given:
//
//	go test -run '^$' -bench RequestsPerRenewal -benchtime 1x -v -renewcost.periods 40 .
//
// Two counts, both the server's. The totals are each connection's in_msgs
// (Connz): every PUB/HPUB the server parsed from that client, whatever
// its subject, JetStream API requests included. The split by subject
// comes from a subscription on ">" in the same account: a client's
// publish is delivered to every matching subscription of the account,
// the JetStream API's service import and the stream's own subscription
// beside it, so it sees $JS.API and $KV publishes as the server does. It
// cannot tell who sent a message: a request is given to the connection
// that holds the subscription its reply subject is addressed to (Connz
// with subscriptions), and a class is only trusted when, for every node,
// the classes add up to the connection's in_msgs. Messages on _INBOX
// (answers, heartbeats), $JS.EVENT (advisories) and a consumer's
// deliveries (the stream message's subject, an ack subject for reply:
// the spy sees each watch's copy of a renewal) are the server's own and
// are counted apart.

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

var renewCostPeriods = flag.Int("renewcost.periods", 0, "BenchmarkRequestsPerRenewal: renewal periods in each steady window, e.g. 40; the benchmark is skipped without it")

// renewCostCase is one set of settings measured.
type renewCostCase struct {
	name                string
	ttl, renew, timeout time.Duration // zero: the defaults
	protocolHi          int           // 0: the build's (one protocol)
}

// BenchmarkRequestsPerRenewal reports the messages the server received
// from the leader per renewal and from each follower per renewal period,
// by subject class, for the default settings and the tests' (LeaseTTL
// 2s, renewals every 500ms), on a build speaking one protocol; and, for
// comparison, the tests' settings on nodes speaking two (P16).
func BenchmarkRequestsPerRenewal(b *testing.B) {
	if *renewCostPeriods <= 0 {
		b.Skip("pass -renewcost.periods 40 (and -benchtime 1x): each case watches that many renewal periods")
	}
	for _, c := range []renewCostCase{
		{name: "default"},
		{name: "tests", ttl: testTTL, renew: testRenew, timeout: testRequestTimeout},
		{name: "tests-two-protocols", ttl: testTTL, renew: testRenew, timeout: testRequestTimeout, protocolHi: wire.ProtocolHi + 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			natstest.CheckLeaks(b)
			var r renewCost
			for b.Loop() {
				r = measureRenewCost(b, c, *renewCostPeriods)
			}
			r.report(b)
		})
	}
}

// The subject classes of the messages clients send, in the order reported.
const (
	classLease          = "$KV lease (renewal CAS)"
	classClusterKV      = "$KV cluster bucket, other keys"
	classInfoCluster    = "$JS.API.STREAM.INFO cluster bucket (Confirm)"
	classInfoMembers    = "$JS.API.STREAM.INFO members bucket (ceiling)"
	classInfoOther      = "$JS.API.STREAM.INFO other"
	classPull           = "$JS.API.CONSUMER.MSG.NEXT (watch pulls)"
	classConsumerCreate = "$JS.API.CONSUMER.CREATE"
	classConsumerDelete = "$JS.API.CONSUMER.DELETE"
	classConsumer       = "$JS.API.CONSUMER.* other (info, list)"
	classAPIOther       = "$JS.API other"
	classAck            = "$JS.ACK"
	classFlowControl    = "$JS.FC"
	classMembersKV      = "$KV members bucket"
	classAccountKV      = "$KV account's bucket"
	classCeilingGet     = "STREAM.MSG.GET of the account's bucket (the ceiling)"
	classControlStatus  = "cluster.<id> control, status"
	classOther          = "other"
	classServerInbox    = "server: _INBOX (answers, deliveries, heartbeats)"
	classServerAdvisory = "server: $JS.EVENT"
	classServerDelivery = "server: consumer deliveries (reply $JS.ACK)"
)

var clientClasses = []string{classLease, classClusterKV, classInfoCluster, classInfoMembers, classInfoOther, classPull,
	classConsumerCreate, classConsumerDelete, classConsumer, classAPIOther, classAck, classFlowControl, classMembersKV, classAccountKV, classCeilingGet, classControlStatus, classOther}

// classify names the class of a message on subject with reply in
// cluster id. A consumer's delivery keeps its stream message's subject,
// its reply the ack subject: the server's, not a client's publish.
func classify(id, subject, reply string) string {
	cluster, members := wire.BucketName(id), wire.MembersBucketName(id)
	switch {
	case strings.HasPrefix(reply, "$JS.ACK."):
		return classServerDelivery
	case strings.HasPrefix(subject, "_INBOX."):
		return classServerInbox
	case strings.HasPrefix(subject, "$JS.EVENT."):
		return classServerAdvisory
	case subject == wire.KVSubject(cluster, wire.LeaseKey):
		return classLease
	case strings.HasPrefix(subject, wire.KVSubject(cluster, "")):
		return classClusterKV
	case strings.HasPrefix(subject, wire.KVSubject(members, "")):
		return classMembersKV
	case strings.HasPrefix(subject, wire.KVSubject(wire.AccountBucketName, "")):
		return classAccountKV
	case subject == "$JS.API.STREAM.MSG.GET."+wire.KVStream(wire.AccountBucketName):
		return classCeilingGet
	case subject == "$JS.API.STREAM.INFO."+wire.KVStream(cluster):
		return classInfoCluster
	case subject == "$JS.API.STREAM.INFO."+wire.KVStream(members):
		return classInfoMembers
	case strings.HasPrefix(subject, "$JS.API.STREAM.INFO."):
		return classInfoOther
	case strings.HasPrefix(subject, "$JS.API.CONSUMER.MSG.NEXT."):
		return classPull
	case strings.HasPrefix(subject, "$JS.API.CONSUMER.CREATE."):
		return classConsumerCreate
	case strings.HasPrefix(subject, "$JS.API.CONSUMER.DELETE."):
		return classConsumerDelete
	case strings.HasPrefix(subject, "$JS.API.CONSUMER."):
		return classConsumer
	case strings.HasPrefix(subject, "$JS.API."):
		return classAPIOther
	case strings.HasPrefix(subject, "$JS.ACK."):
		return classAck
	case strings.HasPrefix(subject, "$JS.FC."):
		return classFlowControl
	case strings.HasPrefix(subject, "cluster."+id+"."):
		return classControlStatus
	}
	return classOther
}

// replyKey is the subscription a reply subject is addressed to: a
// request's reply on nats.go's response subscription _INBOX.<prefix>.*
// is keyed by that subscription, anything else (a pull's inbox) by
// itself; "" for none.
func replyKey(reply string) string {
	if strings.Count(reply, ".") >= 2 {
		return reply[:strings.LastIndexByte(reply, '.')] + ".*"
	}
	return reply
}

// spyKey is one count of the spy: a class and the reply key of its
// messages.
type spyKey struct{ class, reply string }

// spy counts what a subscription on ">" sees, by class and reply key.
type spy struct {
	id     string
	marker string
	mu     sync.Mutex
	counts map[spyKey]int64
	marks  chan map[spyKey]int64
}

func newSpy(b *testing.B, nc *nats.Conn, id string) *spy {
	s := &spy{id: id, marker: "renewcost.marker." + nats.NewInbox()[len("_INBOX."):], counts: map[spyKey]int64{}, marks: make(chan map[spyKey]int64, 1)}
	sub, err := nc.Subscribe(">", func(m *nats.Msg) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if m.Subject == s.marker {
			s.marks <- maps.Clone(s.counts)
			return
		}
		s.counts[spyKey{classify(s.id, m.Subject, m.Reply), replyKey(m.Reply)}]++
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		b.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		b.Fatal(err)
	}
	return s
}

// mark publishes the marker and returns the counts the spy had when it
// arrived: everything the server delivered to it before the marker.
func (s *spy) mark(b *testing.B, nc *nats.Conn) map[spyKey]int64 {
	if err := nc.Publish(s.marker, nil); err != nil {
		b.Fatal(err)
	}
	select {
	case c := <-s.marks:
		return c
	case <-time.After(10 * time.Second):
		b.Fatal("the spy's marker did not come back within 10s")
		return nil
	}
}

// connCount is one connection's counts in Connz, and the subscriptions
// it holds.
type connCount struct {
	in, out int64
	subs    []string
}

func connzByName(b *testing.B, ns *server.Server) map[string]connCount {
	cz, err := ns.Connz(&server.ConnzOptions{Subscriptions: true, Limit: 1024})
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]connCount{}
	for _, c := range cz.Conns {
		out[c.Name] = connCount{in: c.InMsgs, out: c.OutMsgs, subs: c.Subs}
	}
	return out
}

// boundary is one end of the window: the server's counts and the spy's,
// taken so that they hold the same messages. The spy's counts at a
// marker hold every message the server had counted before the marker was
// sent (a message is queued to the spy while it is parsed, before the
// connection's in_msgs grows); a node's message counted only after the
// Connz shows up as a change in in_msgs by the next Connz after a second
// marker, and the boundary is taken again.
func boundary(b *testing.B, ns *server.Server, s *spy, nc *nats.Conn, names []string) (map[string]connCount, map[spyKey]int64) {
	for range 100 {
		c1 := connzByName(b, ns)
		snap := s.mark(b, nc)
		s.mark(b, nc)
		c3 := connzByName(b, ns)
		same := true
		for _, n := range names {
			same = same && c1[n].in == c3[n].in
		}
		if same {
			return c1, snap
		}
	}
	b.Fatal("no quiet moment for a boundary in 100 tries")
	return nil, nil
}

// renewCost is one case's window.
type renewCost struct {
	c                 renewCostCase
	ttl, renew        time.Duration
	window            time.Duration
	leader            string   // its connection's name
	followers         []string // theirs
	in, out           map[string]int64
	byClass           map[string]map[string]int64 // connection -> class -> messages
	unattributed      map[string]int64            // class -> client messages no connection's subscription explains
	server            map[string]int64            // the server's own messages, by class
	renewals, periods float64
	tenures           int
}

func measureRenewCost(b *testing.B, c renewCostCase, periods int) renewCost {
	srv := natstest.RunServer(b)
	rec := newRecorder()
	id := uniqueClusterID(b)
	spyConn := srv.Connect(b, nats.Name("renewcost-spy"))
	sp := newSpy(b, spyConn, id)

	var nodes []*Node
	name := map[*Node]string{}
	for _, n := range []string{"a", "b", "c"} {
		// The defaults but for the case's settings; each node dials its
		// own connection, named "go-cluster <id>/<node>" (engine.dial).
		cfg := Config{ClusterID: id, NodeID: n, NATSURLs: []string{srv.URL()}, Logger: testLogger(),
			LeaseTTL: c.ttl, RenewInterval: c.renew, RequestTimeout: c.timeout, protocolHi: c.protocolHi}
		node := startNode(b, cfg, rec, nil)
		nodes = append(nodes, node)
		name[node] = fmt.Sprintf("go-cluster %s/%s", id, n)
	}
	cfg := nodes[0].Config().withDefaults()
	r := renewCost{c: c, ttl: cfg.LeaseTTL, renew: min(cfg.RenewInterval, cfg.LeaseTTL/3)}
	// A new bucket's first election waits one LeaseTTL (P6).
	leader := waitOneLeader(b, nodes, 3*r.ttl+10*time.Second)
	r.leader = name[leader]
	names := []string{r.leader}
	for _, f := range without(nodes, leader) {
		r.followers = append(r.followers, name[f])
		names = append(names, name[f])
	}
	// Past start-up: the followers' Confirms of the new tenure, the
	// leader's first Confirm a TTL after its acquisition.
	time.Sleep(r.ttl + r.renew)

	tenures := rec.tenureCount()
	r.window = time.Duration(periods) * r.renew
	c0, s0 := boundary(b, srv.NATS(), sp, spyConn, names)
	time.Sleep(r.window)
	c1, s1 := boundary(b, srv.NATS(), sp, spyConn, names)
	r.tenures = rec.tenureCount() - tenures
	rec.check(b)
	if r.tenures != 0 || !leader.IsLeader() {
		b.Errorf("%s: %d new tenures in the window, leader still leading: %v; the figures are not those of a steady cluster", c.name, r.tenures, leader.IsLeader())
	}

	// Which connection holds the subscription each reply key names.
	owner := map[string]string{}
	for _, cz := range []map[string]connCount{c0, c1} {
		for _, n := range names {
			for _, sub := range cz[n].subs {
				owner[sub] = n
			}
		}
	}
	r.in, r.out = map[string]int64{}, map[string]int64{}
	r.byClass, r.unattributed, r.server = map[string]map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, n := range names {
		r.in[n], r.out[n] = c1[n].in-c0[n].in, c1[n].out-c0[n].out
		r.byClass[n] = map[string]int64{}
	}
	for k, v := range s1 {
		d := v - s0[k]
		switch n, ok := owner[k.reply]; {
		case d == 0:
		case k.class == classServerInbox || k.class == classServerAdvisory || k.class == classServerDelivery:
			r.server[k.class] += d
		case ok:
			r.byClass[n][k.class] += d
		default:
			r.unattributed[k.class] += d
		}
	}
	for _, n := range names {
		var sum int64
		for _, v := range r.byClass[n] {
			sum += v
		}
		if sum != r.in[n] {
			b.Errorf("%s: the classes of %q add up to %d messages, its in_msgs grew by %d: the split is incomplete", c.name, n, sum, r.in[n])
		}
	}
	for cl, v := range r.unattributed {
		b.Errorf("%s: %d client messages of class %q have no reply subject a node's connection subscribes to", c.name, v, cl)
	}
	r.renewals = float64(r.byClass[r.leader][classLease])
	r.periods = float64(r.window) / float64(r.renew)
	return r
}

// report logs the table and reports the headline figures as metrics.
func (r renewCost) report(b *testing.B) {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	add("%s: LeaseTTL %v, renewals every %v, protocols %d to %d; window %v = %.0f renewal periods, %.1f TTLs; new tenures in it: %d",
		r.c.name, r.ttl, r.renew, wire.Protocol, max(r.c.protocolHi, wire.ProtocolHi), r.window, r.periods, float64(r.window)/float64(r.ttl), r.tenures)
	add("%-50s %14s %14s %14s", "class (messages the server received)", "leader", "follower 1", "follower 2")
	conns := append([]string{r.leader}, r.followers...)
	for _, cl := range clientClasses {
		var cells []string
		seen := false
		for _, n := range conns {
			v := r.byClass[n][cl]
			seen = seen || v != 0
			cells = append(cells, fmt.Sprintf("%d", v))
		}
		if seen {
			add("%-50s %14s %14s %14s", cl, cells[0], cells[1], cells[2])
		}
	}
	add("%-50s %14d %14d %14d", "in_msgs (Connz)", r.in[conns[0]], r.in[conns[1]], r.in[conns[2]])
	add("%-50s %14d %14d %14d", "out_msgs (Connz: the server sent it)", r.out[conns[0]], r.out[conns[1]], r.out[conns[2]])
	for _, cl := range slices.Sorted(maps.Keys(r.server)) {
		add("%-50s %d (all connections)", cl, r.server[cl])
	}
	add("leader: %.0f renewals (lease CAS) in %.0f periods; %.3f messages per renewal, of which %.3f stream info",
		r.renewals, r.periods, float64(r.in[r.leader])/r.renewals,
		float64(r.byClass[r.leader][classInfoCluster]+r.byClass[r.leader][classInfoMembers]+r.byClass[r.leader][classInfoOther])/r.renewals)
	for i, f := range r.followers {
		add("follower %d: %.3f messages per renewal period; the server sent it %.3f per period", i+1, float64(r.in[f])/r.periods, float64(r.out[f])/r.periods)
	}
	b.Log("\n" + strings.Join(lines, "\n"))
	b.ReportMetric(float64(r.in[r.leader])/r.renewals, "leader-msgs/renewal")
	b.ReportMetric(float64(r.byClass[r.leader][classInfoCluster]+r.byClass[r.leader][classInfoMembers])/r.renewals, "leader-streaminfo/renewal")
	var fol int64
	for _, f := range r.followers {
		fol += r.in[f]
	}
	b.ReportMetric(float64(fol)/float64(len(r.followers))/r.periods, "follower-msgs/period")
}
