package store

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// A campaigning node's Confirm reads the cluster's ceiling
// (docs/design.md §2.7): the largest of its key in the account's bucket
// and the members bucket's lease_ttl_max, each when it is there; none
// when neither is; and, when either cannot be read, no answer at all: a
// Confirm without the ceiling it needs would let a follower of a bucket
// created again with a shorter TTL wait too little
// (TestServerBehindARecreateMakesNoSecondLeader saw two leaders when the
// members stream's leader was cut off). Refused by the server's
// permissions, the error names the permission; a key that holds no
// ceiling fails with ErrCeiling.
func TestConfirmReadsTheClusterCeilingOrFails(t *testing.T) {
	natstest.CheckLeaks(t)
	const id = "ceiling"
	members := "$JS.API.STREAM.INFO." + wire.KVStream(wire.MembersBucketName(id))
	account := "$JS.API.STREAM.MSG.GET." + wire.KVStream(wire.AccountBucketName)
	deny := func(subject string) *server.Permissions {
		return &server.Permissions{Publish: &server.SubjectPermission{Allow: []string{">"}, Deny: []string{subject}}}
	}
	srv := natstest.RunServer(t, natstest.WithOptions(func(o *server.Options) {
		o.Users = []*server.User{
			{Username: "admin", Password: "admin"},
			{Username: "members", Password: "members", Permissions: deny(members)},
			{Username: "account", Password: "account", Permissions: deny(account)},
		}
		o.NoAuthUser = "admin" // the harness's readiness check connects without credentials
	}))
	admin := srv.Connect(t)
	js, _ := jetstream.New(admin)
	if _, _, err := Create(testCtx(t), js, id, Options{LeaseTTL: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	confirm := func(nc *nats.Conn) (election.Incarnation, error) {
		st, err := Open(testCtx(t), nc, API{}, id, Options{}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		st.ReadCeiling(wire.ProtocolHi)
		ctx, cancel := context.WithTimeout(testCtx(t), time.Second) // a refused request is not answered
		defer cancel()
		if err := st.FindMembersBucket(ctx); err != nil { // as a campaigning node's Start
			return election.Incarnation{}, err
		}
		return st.Confirm(ctx)
	}

	if inc, err := confirm(admin); err != nil || inc.ClusterMaxTTL != 0 || inc.LeaseTTL != 2*time.Second {
		t.Errorf("with no ceiling kept: Confirm = %+v, %v; want the bucket's TTL, no ceiling, no error", inc, err)
	}
	kv, _, err := EnsureAccount(testCtx(t), js, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if inc, err := confirm(admin); err != nil || inc.ClusterMaxTTL != 0 {
		t.Errorf("with an account bucket without the key: Confirm = %+v, %v; want no ceiling, no error", inc, err)
	}
	if _, _, err := EnsureMembers(testCtx(t), js, id, Options{LeaseTTL: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if inc, err := confirm(admin); err != nil || inc.ClusterMaxTTL != 5*time.Second {
		t.Errorf("with a members bucket of ceiling 5s: Confirm = %+v, %v; want the ceiling", inc, err)
	}
	if _, _, err := RaiseCeiling(testCtx(t), kv, id, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if inc, err := confirm(admin); err != nil || inc.ClusterMaxTTL != 5*time.Second {
		t.Errorf("ceilings 3s in the account's bucket, 5s in the members bucket: Confirm = %+v, %v; want 5s", inc, err)
	}
	if _, _, err := RaiseCeiling(testCtx(t), kv, id, 8*time.Second); err != nil {
		t.Fatal(err)
	}
	if inc, err := confirm(admin); err != nil || inc.ClusterMaxTTL != 8*time.Second {
		t.Errorf("ceilings 8s in the account's bucket, 5s in the members bucket: Confirm = %+v, %v; want 8s", inc, err)
	}
	for _, user := range []string{"members", "account"} {
		inc, err := confirm(srv.Connect(t, nats.UserInfo(user, user)))
		if err == nil || !errors.Is(err, wire.ErrPermissionDenied) || Classify(err) != election.Permanent {
			t.Errorf("the %s bucket's ceiling refused: Confirm = %+v, %v; want an error wrapping ErrPermissionDenied", user, inc, err)
		}
		t.Logf("refused: %v", err)
	}
	if _, err := kv.Put(testCtx(t), wire.CeilingKey(id), []byte("ten seconds")); err != nil {
		t.Fatal(err)
	}
	if inc, err := confirm(admin); !errors.Is(err, ErrCeiling) {
		t.Errorf("a ceiling key that holds no ceiling: Confirm = %+v, %v; want ErrCeiling", inc, err)
	}
	// Deleted or purged, the ceiling is not taken for none; init writes it
	// again, over the marker.
	for _, remove := range []func(context.Context, string, ...jetstream.KVDeleteOpt) error{kv.Delete, kv.Purge} {
		if err := remove(testCtx(t), wire.CeilingKey(id)); err != nil {
			t.Fatal(err)
		}
		if inc, err := confirm(admin); !errors.Is(err, ErrCeiling) {
			t.Errorf("a ceiling key deleted or purged: Confirm = %+v, %v; want ErrCeiling", inc, err)
		}
		if err := CreateCeiling(testCtx(t), js, API{}, id, time.Second); err != nil {
			t.Fatal(err)
		}
		if inc, err := confirm(admin); !errors.Is(err, ErrCeiling) {
			t.Errorf("a Start over the marker wrote a ceiling: Confirm = %+v, %v; want ErrCeiling", inc, err)
		}
		if _, _, err := RaiseCeiling(testCtx(t), kv, id, 9*time.Second); err != nil {
			t.Fatal(err)
		}
		if inc, err := confirm(admin); err != nil || inc.ClusterMaxTTL != 9*time.Second {
			t.Errorf("raised again over the marker: Confirm = %+v, %v; want 9s", inc, err)
		}
	}
}

// A members bucket is read with the ceiling only where the cluster has
// one: a cluster that never had one does not ask, at every Confirm, for a
// stream that is not there (only the meta leader answers that).
func TestConfirmAsksForNoMembersBucketItNeverHad(t *testing.T) {
	natstest.CheckLeaks(t)
	const id = "nomembers"
	members := "$JS.API.STREAM.INFO." + wire.KVStream(wire.MembersBucketName(id))
	srv := natstest.RunServer(t)
	nc := srv.Connect(t)
	js, _ := jetstream.New(nc)
	if _, _, err := Create(testCtx(t), js, id, Options{}); err != nil {
		t.Fatal(err)
	}
	st, err := Open(testCtx(t), nc, API{}, id, Options{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	st.ReadCeiling(wire.ProtocolHi)
	if err := st.FindMembersBucket(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	spy := srv.Connect(t)
	asked := make(chan struct{}, 16)
	sub, err := spy.Subscribe(members, func(*nats.Msg) { asked <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := st.Confirm(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Confirm(testCtx(t)); err != nil || len(asked) != 0 {
		t.Errorf("Confirms of a cluster without a members bucket asked for it %d times (%v)", len(asked), err)
	}
}

// The account's bucket with a TTL is refused: the ceilings would age out.
func TestAccountBucketWithATTLIsRefused(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, _ := jetstream.New(srv.Connect(t))
	cfg := AccountBucketConfig(Options{})
	cfg.TTL = time.Hour
	if _, err := js.CreateKeyValue(testCtx(t), cfg); err != nil {
		t.Fatal(err)
	}
	if _, _, err := EnsureAccount(testCtx(t), js, Options{}); !errors.Is(err, wire.ErrBucketConfig) {
		t.Errorf("EnsureAccount over a bucket with a TTL = %v, want ErrBucketConfig", err)
	}
}

// RaiseCeiling raises a cluster's ceiling in the account's bucket and
// never lowers it, writes over a value that holds none, and keeps the
// largest of raises made at once (a compare-and-swap); CreateCeiling
// sets it only where there is none.
func TestRaiseCeilingNeverLowersIt(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, _ := jetstream.New(srv.Connect(t))
	kv, created, err := EnsureAccount(testCtx(t), js, Options{})
	if err != nil || !created {
		t.Fatalf("EnsureAccount = %v, %v", created, err)
	}
	ceiling := func(id string) string {
		e, err := kv.Get(testCtx(t), wire.CeilingKey(id))
		if err != nil {
			return err.Error()
		}
		return string(e.Value())
	}
	if err := CreateCeiling(testCtx(t), js, API{}, "a", 0); err != nil || ceiling("a") != "10000" {
		t.Errorf("CreateCeiling(0) = %v, key %s; want the default TTL", err, ceiling("a"))
	}
	if err := CreateCeiling(testCtx(t), js, API{}, "a", 20*time.Second); err != nil || ceiling("a") != "10000" {
		t.Errorf("CreateCeiling over one = %v, key %s; want it left at 10s", err, ceiling("a"))
	}
	for _, c := range []struct {
		ttl           time.Duration
		before, after time.Duration
		key           string
	}{
		{4 * time.Second, 10 * time.Second, 10 * time.Second, "10000"},
		{15 * time.Second, 10 * time.Second, 15 * time.Second, "15000"},
	} {
		before, after, err := RaiseCeiling(testCtx(t), kv, "a", c.ttl)
		if err != nil || before != c.before || after != c.after || ceiling("a") != c.key {
			t.Errorf("RaiseCeiling(%v) = %v, %v, %v, key %s; want %v, %v, %s", c.ttl, before, after, err, ceiling("a"), c.before, c.after, c.key)
		}
	}
	if _, err := kv.Put(testCtx(t), wire.CeilingKey("b"), []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	if _, after, err := RaiseCeiling(testCtx(t), kv, "b", time.Second); err != nil || after != time.Second || ceiling("b") != "1000" {
		t.Errorf("RaiseCeiling over garbage = %v, %v, key %s; want 1s written", after, err, ceiling("b"))
	}
	var wg sync.WaitGroup
	for i := 1; i <= 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := RaiseCeiling(testCtx(t), kv, "c", time.Duration(i)*time.Second); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ceiling("c") != "8000" {
		t.Errorf("after eight raises at once, up to 8s: %s", ceiling("c"))
	}
}

// A node that speaks protocols above wire.Protocol reads with the ceiling
// the highest version every member record names (docs/design.md §5.9),
// in the account's bucket and in a members bucket:
// a record without versions names wire.Protocol; a node that speaks only
// wire.Protocol reads none of it.
func TestConfirmReadsWhatEveryMemberSpeaks(t *testing.T) {
	natstest.CheckLeaks(t)
	const id = "speaks"
	srv := natstest.RunServer(t)
	nc := srv.Connect(t)
	js, _ := jetstream.New(nc)
	if _, _, err := Create(testCtx(t), js, id, Options{}); err != nil {
		t.Fatal(err)
	}
	members, _, err := EnsureMembers(testCtx(t), js, id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	put := func(node string, protocols ...int) {
		data, _ := json.Marshal(wire.MemberRecord{NodeID: node, Kind: wire.MemberCampaigning, Protocols: protocols})
		if _, err := members.Put(testCtx(t), wire.MemberKey(node), data); err != nil {
			t.Fatal(err)
		}
	}
	next := wire.Protocol + 1
	speaks := func(hi int) int {
		st, err := Open(testCtx(t), nc, API{}, id, Options{}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		st.ReadCeiling(hi)
		inc, err := st.Confirm(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		return inc.MembersSpeak
	}
	put("a", wire.Protocol, next)
	put("b", wire.Protocol, next)
	if got := speaks(next); got != next {
		t.Errorf("every member speaks %d: MembersSpeak = %d", next, got)
	}
	account, _, err := EnsureAccount(testCtx(t), js, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(wire.MemberRecord{NodeID: "d", Kind: wire.MemberCampaigning, Protocols: []int{wire.Protocol, next}})
	if _, err := account.Put(testCtx(t), wire.AccountMemberKey(id, "d"), data); err != nil {
		t.Fatal(err)
	}
	if got := speaks(next); got != next {
		t.Errorf("every member in both buckets speaks %d: MembersSpeak = %d", next, got)
	}
	data, _ = json.Marshal(wire.MemberRecord{NodeID: "e", Kind: wire.MemberCampaigning})
	if _, err := account.Put(testCtx(t), wire.AccountMemberKey(id, "e"), data); err != nil {
		t.Fatal(err)
	}
	if got := speaks(next); got != wire.Protocol {
		t.Errorf("a member in the account's bucket names none: MembersSpeak = %d, want %d", got, wire.Protocol)
	}
	if err := account.Delete(testCtx(t), wire.AccountMemberKey(id, "e")); err != nil {
		t.Fatal(err)
	}
	put("c") // a build that names no versions
	if got := speaks(next); got != wire.Protocol {
		t.Errorf("a member names none: MembersSpeak = %d, want %d", got, wire.Protocol)
	}
	if got := speaks(wire.Protocol); got != 0 {
		t.Errorf("a node of one version read the members: MembersSpeak = %d", got)
	}
}
