package presence

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))

func self(nodeID, instance string) Self {
	return Self{ClusterID: "orders", NodeID: nodeID, Instance: instance, Metadata: map[string]string{"addr": "10.0.0.1:5432"}, StartedAt: started}
}

// Reply says the role from the view, the view's leader and epoch, and
// what the node is; the JSON is the documented one.
func TestReplyRolesAndJSON(t *testing.T) {
	s := self("db1.example.com", "i1")
	notReady := errors.New("disk full")
	for _, c := range []struct {
		v    View
		want string
	}{
		{View{Leading: true, Ready: notReady}, wire.StatusLeader},
		{View{Ready: notReady}, wire.StatusNotReady},
		{View{}, wire.StatusFollower},
	} {
		if r := s.Reply(c.v); r.Role != c.want {
			t.Errorf("Reply(%+v).Role = %q, want %q", c.v, r.Role, c.want)
		}
	}
	data, err := json.Marshal(s.Reply(View{Leader: "db2", Epoch: 7, Ready: notReady}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"node":"db1.example.com","role":"not ready","leader":"db2","epoch":7,"not_ready":"disk full","metadata":{"addr":"10.0.0.1:5432"},"started_at":"2026-01-02T02:04:05Z","instance":"i1"}`
	if string(data) != want {
		t.Errorf("reply JSON\n got %s\nwant %s", data, want)
	}
}

// answer subscribes to s's status subjects and answers there with the
// view view returns, as the engine's request server does.
func answer(nc *nats.Conn, s Self, view func() View) ([]*nats.Subscription, error) {
	var subs []*nats.Subscription
	for _, subject := range s.StatusSubjects() {
		sub, err := nc.Subscribe(subject, func(m *nats.Msg) { s.Answer(m, view) })
		if err != nil {
			return nil, err
		}
		subs = append(subs, sub)
	}
	return subs, nil
}

// Answer replies on the node's subject and the cluster's (StatusSubjects)
// with the view at the time of the request, ignores a message without a
// reply subject; nobody answers once the subscriptions end.
func TestAnswerOnBothSubjects(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	nc := srv.Connect(t)
	epoch := int64(3)
	subs, err := answer(nc, self("db1.example.com", "i1"), func() View { return View{Leading: true, Leader: "db1.example.com", Epoch: epoch} })
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil { // the server knows the subscriptions
		t.Fatal(err)
	}
	asker := srv.Connect(t)
	if err := asker.Publish(wire.ClusterStatusSubject("orders"), nil); err != nil { // no reply subject: nothing to answer
		t.Fatal(err)
	}
	for _, subject := range []string{"cluster.orders.status.db1=example=com", "cluster.orders.status"} {
		epoch++
		msg, err := asker.RequestWithContext(testCtx(t), subject, nil)
		if err != nil {
			t.Fatalf("request on %s: %v", subject, err)
		}
		var r wire.StatusReply
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			t.Fatal(err)
		}
		if r.Node != "db1.example.com" || r.Role != wire.StatusLeader || r.Epoch != epoch || r.Instance != "i1" || !r.StartedAt.Equal(started) {
			t.Errorf("reply on %s: %+v", subject, r)
		}
	}
	for _, s := range subs {
		if err := s.Unsubscribe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := asker.Request(wire.StatusSubject("orders", "db1.example.com"), nil, time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Errorf("request after the subscriptions ended: %v, want no responders", err)
	}
}

// RefuseDuplicate sees another process with the NodeID, and nothing else:
// no responder, the same instance, another node.
func TestRefuseDuplicate(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	nc := srv.Connect(t)
	if err := RefuseDuplicate(testCtx(t), nc, "orders", "db1.example.com", "i2", time.Second); err != nil {
		t.Fatalf("with nobody answering: %v", err)
	}
	twin := srv.Connect(t)
	if _, err := answer(twin, self("db1.example.com", "i1"), func() View { return View{} }); err != nil {
		t.Fatal(err)
	}
	if err := twin.Flush(); err != nil { // the server knows the subscriptions
		t.Fatal(err)
	}
	err := RefuseDuplicate(testCtx(t), nc, "orders", "db1.example.com", "i2", time.Second)
	if !errors.Is(err, wire.ErrDuplicateNodeID) {
		t.Errorf("beside instance i1: %v, want ErrDuplicateNodeID", err)
	}
	if err := RefuseDuplicate(testCtx(t), nc, "orders", "db1.example.com", "i1", time.Second); err != nil {
		t.Errorf("asking its own instance: %v", err)
	}
	if err := RefuseDuplicate(testCtx(t), nc, "orders", "db2", "i2", time.Second); err != nil {
		t.Errorf("another node: %v", err)
	}
}

// Announce creates the account's bucket with its configuration, sets the
// cluster's ceiling there from the node's LeaseTTL if it has none, and
// writes the member record under the member key; Withdraw deletes it,
// and does nothing for a node that was not announced.
// AnnounceInMembersBucket does the same in a cluster's members bucket.
func TestAnnounceAndWithdraw(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	nc := srv.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(testCtx(t), nc, store.API{}, "orders", store.Options{LeaseTTL: 4 * time.Second}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := wire.MemberRecord{NodeID: "db1.example.com", Kind: wire.MemberCampaigning, Metadata: map[string]string{"addr": "10.0.0.1:5432"}, StartedAt: started.UTC(),
		Protocols: []int{wire.Protocol, wire.ProtocolHi}}
	for _, c := range []struct {
		announce func(context.Context, *store.Store, store.Options, Self, time.Duration, *slog.Logger) *Announcement
		bucket   string
		key      string
	}{
		{Announce, wire.AccountBucketName, "members.orders.db1=example=com"},
		{AnnounceInMembersBucket, "members-orders", "member.db1=example=com"},
	} {
		a := c.announce(testCtx(t), st, store.Options{LeaseTTL: 4 * time.Second}, self("db1.example.com", "i1"), time.Second, quiet)
		if a == nil {
			t.Fatal("not announced")
		}
		kv, err := js.KeyValue(testCtx(t), c.bucket)
		if err != nil {
			t.Fatal(err)
		}
		st, err := kv.Status(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if st.History() != 1 || st.TTL() != 0 {
			t.Errorf("bucket %s: history %d TTL %v, want 1 and none", c.bucket, st.History(), st.TTL())
		}
		en, err := kv.Get(testCtx(t), c.key)
		if err != nil {
			t.Fatal(err)
		}
		r, err := wire.DecodeMemberRecord(en.Value())
		if err != nil || !reflect.DeepEqual(r, want) {
			t.Errorf("member record %+v, %v; want %+v", r, err, want)
		}
		a.Withdraw(time.Second, quiet)
		if _, err := kv.Get(testCtx(t), c.key); !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Errorf("bucket %s after Withdraw: %v, want the key gone", c.bucket, err)
		}
	}
	account, _ := js.KeyValue(testCtx(t), wire.AccountBucketName)
	if en, err := account.Get(testCtx(t), wire.CeilingKey("orders")); err != nil || string(en.Value()) != "4000" {
		t.Errorf("the cluster's ceiling in the account's bucket: %v, %v; want 4000 (ms)", en, err)
	}
	(*Announcement)(nil).Withdraw(time.Second, quiet)
}
