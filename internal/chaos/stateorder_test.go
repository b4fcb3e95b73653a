package chaos

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
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
	putLease := func(kv jetstream.KeyValue, node string, epoch int64) {
		t.Helper()
		data, err := json.Marshal(cluster.Lease{NodeID: node, Epoch: epoch, TTLMillis: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(ctx, cluster.LeaseKey, data); err != nil {
			t.Fatal(err)
		}
	}
	writeState := func(key, tag, epoch string) {
		t.Helper()
		msg := nats.NewMsg("$KV." + bucket + ".state." + key)
		msg.Data = []byte(tag)
		msg.Header.Set(cluster.StateEpochHeader, epoch)
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

	putLease(kv, "a", 1)
	writeState("k1", "a#1/1/1", "1")
	natstest.WaitFor(t, 10*time.Second, received(0, 2), "the first stream not recorded")
	sent := time.Now()
	if err := js.DeleteKeyValue(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if kv, err = js.CreateKeyValue(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	putLease(kv, "b", 2)
	writeState("k2", "b#1/2/2", "2")
	writeState("k3", "a#1/1/3", "1") // a stale leader's write, unfenced
	if !rec.finish(10 * time.Second) {
		t.Fatal("the recorder did not catch up")
	}

	order := rec.incarnations()
	if len(order) != 2 || len(order[0].Msgs) != 2 || len(order[1].Msgs) != 3 || order[1].Msgs[0].Seq != 1 || order[1].LastSeq != 3 {
		t.Fatalf("recorded %+v; want 2 streams of 2 and 3 messages, the second from sequence 1", order)
	}
	if m := order[1].Msgs[1]; m.Key != "state.k2" || m.Epoch != "2" || string(m.Value) != "b#1/2/2" {
		t.Errorf("second stream, message 2: %+v", m)
	}
	acked := func(inst string, seq, rev uint64, key string) StateTry {
		return StateTry{Instance: inst, Key: key, Value: stateTag(inst, map[string]int64{"a#1": 1, "b#1": 2}[inst], seq), Seq: seq,
			Outcome: Acked, Revision: rev, Sent: sent}
	}
	writes := []StateTry{acked("a#1", 1, 2, "k1"), acked("b#1", 2, 2, "k2"), acked("a#1", 3, 3, "k3")}
	writes[1].Sent, writes[2].Sent = deleted, deleted
	stats, v := CheckState(StateHistory{Order: order, Writes: writes, Deletions: []time.Time{deleted}})
	wantViolation(t, v, `state write "a#1/1/3" (key k3, revision 3 of stream #2) was accepted, but the latest lease record before it (revision 1) is held by b at epoch 2`)
	if len(v) != 1 {
		t.Errorf("want 1 violation, got %q", v)
	}
	if stats.Streams != 2 || stats.InOrder != 3 || stats.Checked != 3 || stats.NotSeen != 0 || stats.Acked != 3 {
		t.Errorf("stats %+v", stats)
	}
}
