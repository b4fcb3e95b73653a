package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// A campaigning node's Confirm reads the cluster's ceiling from the
// members bucket (docs/design.md §2.7): the members bucket's
// lease_ttl_max when it is there, none when there is no members bucket,
// and, when the members bucket's stream info cannot be read, no answer
// at all: a Confirm without the ceiling it needs would let a follower of
// a bucket created again with a shorter TTL wait too little
// (TestServerBehindARecreateMakesNoSecondLeader saw two leaders when the
// members stream's leader was cut off). Refused by the server's
// permissions, the error names the permission.
func TestConfirmReadsTheClusterCeilingOrFails(t *testing.T) {
	natstest.CheckLeaks(t)
	const id = "ceiling"
	members := "$JS.API.STREAM.INFO." + wire.KVStream(wire.MembersBucketName(id))
	srv := natstest.RunServer(t, natstest.WithOptions(func(o *server.Options) {
		o.Users = []*server.User{
			{Username: "admin", Password: "admin"},
			{Username: "node", Password: "node", Permissions: &server.Permissions{Publish: &server.SubjectPermission{Allow: []string{">"}, Deny: []string{members}}}},
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
		return st.Confirm(ctx)
	}

	if inc, err := confirm(admin); err != nil || inc.ClusterMaxTTL != 0 || inc.LeaseTTL != 2*time.Second {
		t.Errorf("without a members bucket: Confirm = %+v, %v; want the bucket's TTL, no ceiling, no error", inc, err)
	}
	if _, _, err := EnsureMembers(testCtx(t), js, id, Options{LeaseTTL: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if inc, err := confirm(admin); err != nil || inc.ClusterMaxTTL != 5*time.Second {
		t.Errorf("with a members bucket of ceiling 5s: Confirm = %+v, %v; want the ceiling", inc, err)
	}
	inc, err := confirm(srv.Connect(t, nats.UserInfo("node", "node")))
	if err == nil || !errors.Is(err, wire.ErrPermissionDenied) || Classify(err) != election.Permanent {
		t.Errorf("the members bucket's stream info refused: Confirm = %+v, %v; want an error wrapping ErrPermissionDenied", inc, err)
	}
	t.Logf("refused: %v", err)
}

// A node that speaks protocols above wire.Protocol reads with the ceiling
// the highest version every member record names (docs/design.md §5.9):
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
	put("c") // a build that names no versions
	if got := speaks(next); got != wire.Protocol {
		t.Errorf("a member names none: MembersSpeak = %d, want %d", got, wire.Protocol)
	}
	if got := speaks(wire.Protocol); got != 0 {
		t.Errorf("a node of one version read the members: MembersSpeak = %d", got)
	}
}
