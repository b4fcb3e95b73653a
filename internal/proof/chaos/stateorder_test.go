package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TestOrderRecorderFollowsARecreatedBucket: the recorder reads a bucket's
// stream from sequence 1, and a bucket deleted and created again as a new
// incarnation from sequence 1. The second stream holds a state write
// published without the lease precondition after another node's lease
// record, as a broken fence would let through: CheckState must report it
// from the recorded order, and nothing else.
func TestOrderRecorderFollowsARecreatedBucket(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	const bucket = "cluster-order"
	rec := startOrderRecorder(js, bucket)
	defer rec.close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := jetstream.KeyValueConfig{Bucket: bucket, History: 8}
	kv, err := js.CreateKeyValue(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// putLease writes the first record of a new stream, at revision 1:
	// a record of this protocol at the first epoch of its incarnation
	// (docs/design.md §2.4), which it returns.
	putLease := func(kv jetstream.KeyValue, node string) int64 {
		t.Helper()
		s, err := js.Stream(ctx, "KV_"+bucket)
		if err != nil {
			t.Fatal(err)
		}
		epoch := bucketmeta.Base(s.CachedInfo().Config.FirstSeq, 0) + 1
		data, err := json.Marshal(cluster.Lease{Version: wire.Protocol, NodeID: node, Epoch: epoch, TTLMillis: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(ctx, wire.LeaseKey, data); err != nil {
			t.Fatal(err)
		}
		return epoch
	}
	writeState := func(key, inst string, epoch int64, seq uint64) {
		t.Helper()
		msg := nats.NewMsg("$KV." + bucket + ".state." + key)
		msg.Data = []byte(stateTag(inst, epoch, seq))
		msg.Header.Set(fenced.EpochHeader, strconv.FormatInt(epoch, 10))
		if _, err := js.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	received := func(inc, n int) func() bool {
		return func() bool {
			got := rec.incarnations()
			return len(got) > inc && len(got[inc].Msgs) >= n
		}
	}

	ea := putLease(kv, "a")
	writeState("k1", "a#1", ea, 1)
	natstest.WaitFor(t, 10*time.Second, received(0, 2), "the first stream not recorded")
	sent := time.Now()
	if err := js.DeleteKeyValue(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	natstest.CreateAfterDelete(t, "create the bucket again", func() (err error) {
		kv, err = js.CreateKeyValue(ctx, cfg)
		return err
	})
	eb := putLease(kv, "b")
	writeState("k2", "b#1", eb, 2)
	writeState("k3", "a#1", ea, 3) // a stale leader's write, unfenced
	if !rec.finish(10 * time.Second) {
		t.Fatal("the recorder did not catch up")
	}

	order := rec.incarnations()
	if len(order) != 2 || len(order[0].Msgs) != 2 || len(order[1].Msgs) != 3 || order[1].Msgs[0].Seq != 1 || order[1].LastSeq != 3 {
		t.Fatalf("recorded %+v; want 2 streams of 2 and 3 messages, the second from sequence 1", order)
	}
	if m := order[1].Msgs[1]; m.Key != "state.k2" || m.Epoch != strconv.FormatInt(eb, 10) || string(m.Value) != stateTag("b#1", eb, 2) {
		t.Errorf("second stream, message 2: %+v", m)
	}
	acked := func(inst string, seq, rev uint64, key string) StateTry {
		return StateTry{Instance: inst, Key: key, Value: stateTag(inst, map[string]int64{"a#1": ea, "b#1": eb}[inst], seq), Seq: seq,
			Outcome: Acked, Revision: rev, Sent: sent}
	}
	writes := []StateTry{acked("a#1", 1, 2, "k1"), acked("b#1", 2, 2, "k2"), acked("a#1", 3, 3, "k3")}
	writes[1].Sent, writes[2].Sent = deleted, deleted
	stats, v := CheckState(StateHistory{Order: order, Writes: writes, Deletions: []time.Time{deleted}})
	wantViolation(t, v, fmt.Sprintf(`state write %q (key k3, revision 3 of stream #2) was accepted, but the latest lease record before it (revision 1) is held by b at epoch %d`,
		stateTag("a#1", ea, 3), eb))
	if len(v) != 1 {
		t.Errorf("want 1 violation, got %q", v)
	}
	if stats.Streams != 2 || stats.InOrder != 3 || stats.Checked != 3 || stats.NotSeen != 0 || stats.Acked != 3 {
		t.Errorf("stats %+v", stats)
	}
}

// TestOrderRecorderKeepsEachMessageInItsOwnIncarnation: a consumer made
// for the old stream's name can read the stream created again (seed 99,
// a bucket recreated under route partitions: the new stream's messages
// from the old last sequence on were recorded as the old stream's, and
// CheckState reported the new leader's writes as fenced by the old
// leader's record). A message stored after the next incarnation was
// created cannot be the old stream's: every server of a run shares one
// clock, and the old stream was deleted before the new one was made.
func TestOrderRecorderKeepsEachMessageInItsOwnIncarnation(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 1, 28, 0, 0, time.UTC)
	old := &Incarnation{Created: t0, Msgs: []StreamMsg{
		{Seq: 105, Key: "state.chaos.k1", Time: t0.Add(20 * time.Second)},
		{Seq: 106, Key: "lease", Time: t0.Add(23 * time.Second)},
		{Seq: 108, Key: "state.chaos.k31", Time: t0.Add(40 * time.Second)}, // the new stream's
	}}
	recreated := &Incarnation{Created: t0.Add(24 * time.Second), Msgs: []StreamMsg{
		{Seq: 108, Key: "state.chaos.k31", Time: t0.Add(40 * time.Second)},
	}}
	o := &orderRecorder{incs: []*Incarnation{old, recreated}}
	incs := o.incarnations()
	if got := len(incs[0].Msgs); got != 2 || incs[0].Msgs[1].Seq != 106 {
		t.Errorf("the old incarnation holds %d messages (%+v), want its own two, up to 106", got, incs[0].Msgs)
	}
	if got := len(incs[1].Msgs); got != 1 {
		t.Errorf("the new incarnation holds %d messages, want 1", got)
	}
}

// TestOrderRecorderNeverGoesBackToADeletedIncarnation: a server cut off
// while the bucket was deleted and created again answers stream info for
// the deleted stream until it catches up, and, just after the create, may
// be the only one to answer (internal/natstest
// TestARejoiningServerAnswersForTheStreamDeletedWhileItWasCutOff). Seen in
// a run (seed 99, 90s): the recorder took that answer for the stream it
// had followed and recorded the new stream's messages as the old one's,
// and CheckState reported every state write from revision 181 on as
// outside its incarnation's range. The recorder's consumer is deleted with
// its stream: from then on an answer naming that stream, or an older one,
// is a stale server's.
func TestOrderRecorderNeverGoesBackToADeletedIncarnation(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	const bucket = "cluster-ended"
	rec := startOrderRecorder(js, bucket)
	defer rec.close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool {
		got := rec.incarnations()
		return len(got) == 1 && len(got[0].Msgs) == 1
	}, "the stream not recorded")
	created := rec.incarnations()[0].Created
	if err := js.DeleteKeyValue(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return rec.ended.Equal(created)
	}, "the recorder did not see its consumer deleted with the stream")
	// What a stale server's answer would name: the deleted stream, or one
	// before it.
	for _, stale := range []time.Time{created, created.Add(-time.Second)} {
		if inc := rec.incarnation(stale); inc != nil {
			t.Errorf("an answer naming the stream created %v, deleted, gave incarnation %+v; want none", stale, inc)
		}
	}
	if n := len(rec.incarnations()); n != 1 {
		t.Errorf("%d incarnations recorded, want 1", n)
	}
	if inc := rec.incarnation(created.Add(time.Second)); inc == nil {
		t.Error("a newer stream gave no incarnation")
	}
}

// TestOrderRecorderTakesNoIncarnationOlderThanTheLatest: once the recorder
// has found an incarnation, an answer naming an older one is stale.
func TestOrderRecorderTakesNoIncarnationOlderThanTheLatest(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 45, 0, 0, time.UTC)
	o := &orderRecorder{}
	first := o.incarnation(t0)
	if first == nil || o.incarnation(t0) != first {
		t.Fatal("the first stream's answers do not give one incarnation")
	}
	second := o.incarnation(t0.Add(16 * time.Second))
	if second == nil || second == first {
		t.Fatal("a newer stream gave no new incarnation")
	}
	if inc := o.incarnation(t0); inc != nil {
		t.Errorf("an answer naming the first stream after the second was found gave %+v; want none", inc)
	}
}

// TestOrderRecorderLeavesAnIncarnationWhenANewerOneIsNamed: while the
// recorder follows an incarnation through a consumer that was not deleted
// (made for it on a stale server's word, it reads the new stream), it asks
// for the stream's identity, and on an answer naming a newer incarnation
// records that one and follows it from sequence 1. Here its consumer's
// server (a) and the one its lookups ask (b) are two servers with a stream
// each: the stream on b is deleted and created again, the one a
// consumer reads stays.
func TestOrderRecorderLeavesAnIncarnationWhenANewerOneIsNamed(t *testing.T) {
	natstest.CheckLeaks(t)
	const bucket = "cluster-watch"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var jss []jetstream.JetStream
	for range 2 {
		js, err := jetstream.New(natstest.RunServer(t).Connect(t))
		if err != nil {
			t.Fatal(err)
		}
		jss = append(jss, js)
	}
	a, b := jss[0], jss[1]
	cfg := jetstream.KeyValueConfig{Bucket: bucket}
	if _, err := b.CreateKeyValue(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	kv, err := a.CreateKeyValue(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "k1", []byte("1")); err != nil {
		t.Fatal(err)
	}
	rec := startOrderRecorder(a, bucket, b)
	defer rec.close()
	natstest.WaitFor(t, 10*time.Second, func() bool {
		got := rec.incarnations()
		return len(got) == 1 && len(got[0].Msgs) == 1
	}, "the first message not recorded")
	if err := b.DeleteKeyValue(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	natstest.CreateAfterDelete(t, "create the bucket again", func() error {
		_, err := b.CreateKeyValue(ctx, cfg)
		return err
	})
	if _, err := kv.Put(ctx, "k2", []byte("2")); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool {
		got := rec.incarnations()
		return len(got) == 2 && len(got[1].Msgs) == 2
	}, "the newer incarnation not followed, from sequence 1")
	got := rec.incarnations()
	if len(got[0].Msgs) != 1 || got[0].Msgs[0].Seq != 1 {
		t.Errorf("the first incarnation holds %+v; want its message 1 only (2 was stored after the newer one's creation)", got[0].Msgs)
	}
}
