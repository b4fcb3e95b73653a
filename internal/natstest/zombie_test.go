package natstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestARejoiningServerAnswersForTheStreamDeletedWhileItWasCutOff documents
// a nats-server v2.15.2 behaviour that breaks the assumption of
// docs/design.md C4 ("an answer received after a write's acknowledgement
// names the write's incarnation or a newer one"): a server whose routes
// were cut while the bucket's stream was deleted and created again keeps
// its copy of the deleted stream until its meta state catches up, and
// answers $JS.API.STREAM.INFO for it (as its stream leader, or, once that
// group is leaderless, from its copy: jetstream_api.go,
// jsStreamInfoRequest, isGroupLeaderless). Meanwhile a write sent through
// it is routed to the new stream's leader and acknowledged there. So a
// client on that server gets its write acknowledged in the new incarnation
// and then a stream info naming the old one.
//
// Seen in the chaos run seed 99 (90s, default,quorum-loss): the bucket was
// recreated while n2, stream and meta leader, was cut off; once healed, its
// answers named the deleted incarnation, and a node led with an epoch of
// that incarnation's base (epoch regression).
//
// Here the window is held open: the server cut off (z) gets its routes
// back to the new stream's leader (s) only, not to the meta leader (l), so
// it cannot catch up; the write through z is acknowledged by s. (Once z
// hears the meta leader, it deletes its copy: not checked here, it takes
// seconds and proves nothing of the window.)
func TestARejoiningServerAnswersForTheStreamDeletedWhileItWasCutOff(t *testing.T) {
	t.Parallel() // each its own cluster; it waits on the servers' elections
	CheckLeaks(t)
	const bucket, stream = "zombie", "KV_zombie"
	c := runRouteProxied(t)
	ncs := make([]*nats.Conn, 3)
	jss := make([]jetstream.JetStream, 3)
	for i, s := range c.Servers() {
		ncs[i] = s.Connect(t, nats.IgnoreDiscoveredServers())
		js, err := jetstream.New(ncs[i])
		if err != nil {
			t.Fatal(err)
		}
		jss[i] = js
	}
	cfg := jetstream.KeyValueConfig{Bucket: bucket, Replicas: 3}
	meta := c.MetaLeader()
	if _, err := jss[meta].CreateKeyValue(context.Background(), cfg); err != nil {
		t.Fatalf("create the bucket: %v", err)
	}
	// z leads the stream and not the meta group: the majority can delete
	// and create at once, without electing a meta leader first.
	z := c.MoveStreamLeader(t, ncs[meta], stream, []int{0, 1, 2}, meta)
	old := localStream(t, c.Server(z).NATS(), stream)
	oldCreated := old.Created

	for j := range 3 {
		if j != z {
			c.CutRoutes(z, j)
		}
	}
	// The delete's answer is z's, the stream's leader, and is lost: a
	// short timeout, and the next try finds the bucket gone.
	a := (z + 1) % 3
	WaitFor(t, 10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		err := jss[a].DeleteKeyValue(ctx, bucket)
		return err == nil || errors.Is(err, jetstream.ErrBucketNotFound)
	}, "delete the bucket on the majority's side")
	WaitFor(t, 10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := jss[a].CreateKeyValue(ctx, cfg)
		return err == nil
	}, "create the bucket again on the majority's side")
	l := c.MetaLeader()
	if l < 0 || l == z {
		t.Fatalf("meta leader n%d; want one on the majority's side", l)
	}
	// Both members of the majority hold the new stream before it moves.
	var newCreated time.Time
	WaitFor(t, 10*time.Second, func() bool {
		for j := range 3 {
			if d, ok := localStreamOK(c.Server(j).NATS(), stream); j != z && (!ok || !d.Created.After(oldCreated)) {
				return false
			} else if j != z {
				newCreated = d.Created
			}
		}
		return true
	}, "the majority does not hold the new stream")
	s := c.MoveStreamLeader(t, ncs[l], stream, []int{a, 3 - z - a}, l)
	if got := localStream(t, c.Server(z).NATS(), stream).Created; !got.Equal(oldCreated) {
		t.Fatalf("n%d, cut off, holds the stream created %v; want the deleted one's %v", z, got, oldCreated)
	}

	c.HealRoutes(z, s)
	WaitFor(t, 10*time.Second, func() bool { return c.Routed(z, s) && c.Routed(s, z) }, "no route between n%d and n%d", z, s)
	kvz, err := jss[z].KeyValue(context.Background(), bucket)
	if err != nil {
		t.Fatalf("bucket through n%d: %v", z, err)
	}
	// z answers as the old stream's leader until, having heard from no
	// quorum for 10s, it steps down; then, once its JetStream has run for
	// 10s, as a member of a leaderless group: retry until it does.
	var rev uint64
	var named []time.Time
	WaitFor(t, 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if rev, err = kvz.Put(ctx, "k", []byte("through the rejoining server")); err != nil {
			return false
		}
		// The write is in the new incarnation: its leader has it.
		if got := localStream(t, c.Server(s).NATS(), stream); got.LastSeq < rev {
			t.Fatalf("write acknowledged at revision %d, but the new stream's last sequence is %d", rev, got.LastSeq)
		}
		named = streamInfoAnswers(t, ncs[z], stream, oldCreated)
		return containsTime(named, oldCreated)
	}, "after the write's acknowledgement (revision %d of the stream created %v), stream info through n%d named %v (err %v); want an answer naming the deleted stream created %v",
		rev, newCreated, z, named, err, oldCreated)
	// The copy answering for the deleted stream took no write.
	if got := localStream(t, c.Server(z).NATS(), stream); !got.Created.Equal(oldCreated) || got.LastSeq != old.LastSeq {
		t.Fatalf("n%d holds the stream created %v at sequence %d; want the deleted one's copy, still at %d", z, got.Created, got.LastSeq, old.LastSeq)
	}
	t.Logf("write acknowledged at revision %d of the stream created %v; then stream info through n%d answered %v (deleted: %v)",
		rev, newCreated, z, named, oldCreated)
}

// localStream returns the copy of stream that ns holds, failing the test
// if it holds none.
func localStream(t *testing.T, ns *server.Server, stream string) streamCopy {
	t.Helper()
	d, ok := localStreamOK(ns, stream)
	if !ok {
		t.Fatalf("%s holds no stream %s", ns.Name(), stream)
	}
	return d
}

// streamCopy is what one server holds of a stream.
type streamCopy struct {
	Created time.Time
	LastSeq uint64
}

func localStreamOK(ns *server.Server, stream string) (streamCopy, bool) {
	jsz, err := ns.Jsz(&server.JSzOptions{Accounts: true, Streams: true})
	if err != nil {
		return streamCopy{}, false
	}
	for _, a := range jsz.AccountDetails {
		for _, s := range a.Streams {
			if s.Name == stream {
				return streamCopy{Created: s.Created, LastSeq: s.State.LastSeq}, true
			}
		}
	}
	return streamCopy{}, false
}

// streamInfoAnswers sends one stream info request on nc and returns the
// creation times every answer that arrives within half a second names,
// until one names want: each server that deems itself able to answer
// does, and a client takes the first. One that answers does so at once;
// the caller asks again.
func streamInfoAnswers(t *testing.T, nc *nats.Conn, stream string, want time.Time) []time.Time {
	t.Helper()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishRequest(fmt.Sprintf(server.JSApiStreamInfoT, stream), inbox, nil); err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		msg, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			return out
		}
		var resp server.JSApiStreamInfoResponse
		if err := json.Unmarshal(msg.Data, &resp); err != nil || resp.Error != nil || resp.StreamInfo == nil {
			continue
		}
		out = append(out, resp.StreamInfo.Created)
		if resp.StreamInfo.Created.Equal(want) {
			return out
		}
	}
}

func containsTime(ts []time.Time, want time.Time) bool {
	for _, x := range ts {
		if x.Equal(want) {
			return true
		}
	}
	return false
}
