package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// askStatus sends a status request to one node and decodes the reply.
func askStatus(nc *nats.Conn, clusterID, nodeID string) (wire.StatusReply, error) {
	var r wire.StatusReply
	msg, err := nc.Request(wire.StatusSubject(clusterID, nodeID), nil, time.Second)
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(msg.Data, &r)
}

// memberRecord reads the member key of nodeID of cluster clusterID in the
// account's bucket kv; ok is false when absent or deleted.
func memberRecord(t *testing.T, kv jetstream.KeyValue, clusterID, nodeID string) (wire.MemberRecord, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	key := wire.AccountMemberKey(clusterID, nodeID)
	en, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return wire.MemberRecord{}, false
	}
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	r, err := wire.DecodeMemberRecord(en.Value())
	if err != nil {
		t.Fatalf("member record of %s: %v", nodeID, err)
	}
	return r, true
}

// Every node answers status requests with no wiring, and announces itself
// in the account's bucket, not the election's: a node killed without Stop keeps its record and stops
// answering (go-cluster status shows it down); Stop withdraws the record.
// The cluster costs one stream of its own: no members bucket.
func TestMembersAnnounceAnswerAndWithdraw(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	crashConn := srv.Connect(t) // c's connection: the test closes it, a crash
	cfgA := stableConfig(id, "a.example.com", srv.URL())
	cfgA.Metadata = map[string]string{"addr": "10.0.0.1:5432"}
	a := startNode(t, cfgA, rec, nil)
	b := startNode(t, stableConfig(id, "b", srv.URL()), rec, nil)
	cfgC := stableConfig(id, "c", srv.URL()) // stable leases: the bucket must hold its first tenure only
	cfgC.Conn, cfgC.NATSURLs = crashConn, nil
	c := startNode(t, cfgC, rec, nil)
	obs, err := NewObserver(testConfig(id, "watcher", srv.URL()), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := obs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = obs.Stop(context.Background()) })
	nodes := []*Node{a, b, c}
	leader := waitOneLeader(t, nodes, 10*time.Second)
	natstest.WaitFor(t, 5*time.Second, func() bool { return obs.Leader() == leader.Config().NodeID }, "the observer did not see the leader")

	nc := srv.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, wire.AccountBucketName)
	if err != nil {
		t.Fatal(err)
	}
	checkAccountBucket(t, js, id, cfgA.LeaseTTL)

	// An observer is no member: it neither answers nor announces.
	if _, err := askStatus(nc, id, obs.Config().NodeID); !errors.Is(err, nats.ErrNoResponders) {
		t.Errorf("the observer answered status: %v", err)
	}
	if _, ok := memberRecord(t, kv, id, obs.Config().NodeID); ok {
		t.Error("the observer announced itself")
	}

	// None of them wires health: each answers on its own subject.
	for _, n := range nodes {
		var r wire.StatusReply
		natstest.WaitFor(t, 5*time.Second, func() bool {
			r, err = askStatus(nc, id, n.Config().NodeID)
			return err == nil && r.Leader == leader.Config().NodeID
		}, "status of %s: %+v, %v", n.Config().NodeID, r, err)
		want := wire.StatusFollower
		if n == leader {
			want = wire.StatusLeader
		}
		if r.Node != n.Config().NodeID || r.Role != want || r.Epoch != leader.Epoch() || r.StartedAt.IsZero() || r.NotReady != "" {
			t.Errorf("status of %s = %+v, want role %s, epoch %d", n.Config().NodeID, r, want, leader.Epoch())
		}
		m, ok := memberRecord(t, kv, id, n.Config().NodeID)
		wantKind := wire.MemberCampaigning
		if !ok || m.NodeID != n.Config().NodeID || m.Kind != wantKind || m.StartedAt.IsZero() {
			t.Errorf("member record of %s = %+v (present %v), want kind %s", n.Config().NodeID, m, ok, wantKind)
		}
	}
	if r, _ := askStatus(nc, id, "a.example.com"); r.Metadata["addr"] != "10.0.0.1:5432" {
		t.Errorf("a's status metadata = %v", r.Metadata)
	}
	if m, _ := memberRecord(t, kv, id, "a.example.com"); m.Metadata["addr"] != "10.0.0.1:5432" {
		t.Errorf("a's member metadata = %v", m.Metadata)
	}
	if wire.MemberKey("a.example.com") != "member.a=example=com" {
		t.Errorf("wire.MemberKey = %q", wire.MemberKey("a.example.com"))
	}

	// The cluster-wide subject: one reply per running node.
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest(wire.ClusterStatusSubject(id), inbox, nil); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < 3 {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("cluster-wide status: %d replies (%v): %v", len(seen), seen, err)
		}
		var r wire.StatusReply
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Fatal(err)
		}
		seen[r.Node] = true
	}
	_ = sub.Unsubscribe()

	// c crashes: its record stays, it no longer answers.
	crashConn.Close()
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("c did not stop after its connection closed")
	}
	// (The server drops c's subscriptions once it sees the connection go.)
	natstest.WaitFor(t, 5*time.Second, func() bool {
		_, err := askStatus(nc, id, "c")
		return errors.Is(err, nats.ErrNoResponders)
	}, "crashed c still answers status")
	if _, ok := memberRecord(t, kv, id, "c"); !ok {
		t.Error("crashed c's member record is gone")
	}

	// b stops: its record is withdrawn, and it no longer answers.
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := b.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := memberRecord(t, kv, id, "b"); ok {
		t.Error("stopped b's member record is still there")
	}
	if _, err := askStatus(nc, id, "b"); !errors.Is(err, nats.ErrNoResponders) {
		t.Errorf("stopped b answered status: %v", err)
	}
	if err := obs.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := memberRecord(t, kv, id, "watcher"); ok {
		t.Error("stopped observer's member record is still there")
	}
}

// checkAccountBucket checks the account's bucket's settings, that the
// cluster has no stream but its election bucket's, with the ceiling its
// first node's LeaseTTL (ceiling), and that the announcements left the election's
// stream alone: it holds the lease key only, and the first leader's epoch
// is 1 (a write there would raise the stream's last sequence, an epoch
// floor).
func checkAccountBucket(t *testing.T, js jetstream.JetStream, id string, ceiling time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	akv, err := js.KeyValue(ctx, wire.AccountBucketName)
	if err != nil {
		t.Fatal(err)
	}
	st, err := akv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.History() != 1 || st.TTL() != 0 {
		t.Errorf("account's bucket: history %d, TTL %v; want 1 and none", st.History(), st.TTL())
	}
	if e, err := akv.Get(ctx, wire.CeilingKey(id)); err != nil || string(e.Value()) != fmt.Sprint(ceiling.Milliseconds()) {
		t.Errorf("the cluster's ceiling: %v, %v; want the first node's LeaseTTL, %v", e, err, ceiling)
	}
	if _, err := js.Stream(ctx, wire.KVStream(wire.MembersBucketName(id))); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("the cluster has a members bucket (%v): a cluster costs one stream", err)
	}
	ekv, err := js.KeyValue(ctx, wire.BucketName(id))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ekv.Keys(ctx)
	if err != nil || len(keys) != 1 || keys[0] != wire.LeaseKey {
		t.Errorf("election bucket keys = %v (%v), want only %s", keys, err, wire.LeaseKey)
	}
	en, err := ekv.Get(ctx, wire.LeaseKey)
	if err != nil {
		t.Fatal(err)
	}
	est, err := ekv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := decodeLease(en.Value(), en.Revision()); err != nil || l.Epoch != int64(streamFirstSeq(est)) {
		t.Errorf("lease = %+v (%v), want the bucket's first epoch", l, err)
	}
}

// A member key never meets a state key or the election's keys, and is
// exactly two subject tokens, so that "member.*" lists every member.
func TestMemberKeyIsNoStateKey(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"a", "db1.example.com", "state", "lease"} {
		k := wire.MemberKey(id)
		if k == wire.LeaseKey || k == wire.CooldownKey(id) || strings.HasPrefix(k, fenced.KeyPrefix) {
			t.Errorf("wire.MemberKey(%q) = %q meets another key", id, k)
		}
		if toks := strings.Split(k, "."); len(toks) != 2 || toks[0] != "member" {
			t.Errorf("wire.MemberKey(%q) = %q is not two tokens under member.", id, k)
		}
	}
}

// A node that may not announce itself still elects: it logs one warning
// and announces nothing, and the refusal, which stays the connection's last
// error, does not read as the election's. Three refusals: the account
// info that creating the account's bucket reads first, to a node that may
// not create buckets; the creation of the account's bucket, to a node
// that may create its election's bucket; and a write in the account's
// bucket, by a node whose NodeID holds the
// election bucket's name (so the refused subject does too).
// (securetest's optional permissions cover a node that may not even look
// the account's bucket up.)
func TestMembersBucketDeniedStillElects(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	cases := []struct {
		name, id, nodeID string
		deny             func(id string) []string
		refused          func(id string) string // in the last error
		accountBucket    bool                   // exists afterwards
	}{
		// First: the account's bucket is not there yet. Creating it reads
		// the account info first (jetstream's CreateKeyValue), refused to
		// a node that may not create buckets (the election's exists).
		{name: "no account info", deny: func(string) []string { return []string{"$JS.API.INFO"} },
			refused: func(string) string { return `"$JS.API.INFO"` }},
		{name: "no account bucket", deny: func(string) []string {
			return []string{"$JS.API.STREAM.CREATE." + wire.KVStream(wire.AccountBucketName)}
		},
			refused: func(string) string { return `"$JS.API.STREAM.CREATE.` + wire.KVStream(wire.AccountBucketName) + `"` }},
		{name: "no member write", deny: func(id string) []string { return []string{wire.KVSubject(wire.AccountBucketName, "members.>")} },
			refused: func(id string) string {
				return wire.KVSubject(wire.AccountBucketName, wire.AccountMemberKey(id, wire.BucketName(id)+"-1"))
			}, accountBucket: true},
	}
	for i := range cases {
		cases[i].id = uniqueClusterID(t)
		cases[i].nodeID = wire.BucketName(cases[i].id) + "-1"
	}
	srv := natstest.RunServer(t, natstest.WithOptions(func(o *server.Options) {
		o.NoAuthUser = "admin"
		o.Users = []*server.User{{Username: "admin", Password: "admin"}}
		for _, c := range cases {
			o.Users = append(o.Users, &server.User{Username: c.id, Password: c.id, Permissions: &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: []string{">"}, Deny: c.deny(c.id)},
				Subscribe: &server.SubjectPermission{Allow: []string{">"}},
			}})
		}
	}))
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The tests' TTL: a first election 2s after the start, not
			// the default 10s.
			if _, _, err := store.Create(ctx(t), js, c.id, store.Options{LeaseTTL: testTTL}); err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			cfg := testConfig(c.id, c.nodeID, srv.URL())
			cfg.NATSOptions = []nats.Option{nats.UserInfo(c.id, c.id)}
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			rec := newRecorder()
			n := startNode(t, cfg, rec, nil)
			natstest.WaitFor(t, 10*time.Second, n.IsLeader, "a node that may not announce never led")

			nc := n.Conn()
			st, err := n.eng.Fenced().Node.Store()
			if err != nil {
				t.Fatal(err)
			}
			if last := nc.LastError(); !errors.Is(last, nats.ErrPermissionViolation) || !strings.Contains(last.Error(), c.refused(c.id)) {
				t.Fatalf("last error = %v, want the refusal of %s", last, c.refused(c.id))
			}
			probe := errors.New("probe")
			if err := st.ExplainPermission(probe); err != probe {
				t.Errorf("the announcement's refusal read as the election's: %v", err)
			}
			if n.eng.Snapshot().Announced {
				t.Error("announced without permission")
			}
			if err := n.Stop(ctx(t)); err != nil {
				t.Fatal(err)
			}
			if n.Err() != nil {
				t.Errorf("Err() = %v", n.Err())
			}
			if got := strings.Count(logs.String(), "could not announce"); got != 1 || strings.Contains(logs.String(), "could not withdraw") {
				t.Errorf("%d announce warnings, want 1 and no withdraw warning:\n%s", got, logs.String())
			}
			kv, err := js.KeyValue(ctx(t), wire.AccountBucketName)
			switch {
			case !c.accountBucket && !errors.Is(err, jetstream.ErrBucketNotFound):
				t.Errorf("account's bucket lookup: %v, want not found", err)
			case c.accountBucket && err != nil:
				t.Fatal(err)
			case c.accountBucket:
				if _, ok := memberRecord(t, kv, c.id, cfg.NodeID); ok {
					t.Error("a member record was written without permission")
				}
			}
			rec.check(t)
		})
	}
}
