package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// The leader's metadata reaches every node and observer through
// Lease, and any KV client through the lease record: here a plain
// jetstream client and encoding/json, as the nats CLI would read it.
func TestLeaderMetadataIsPublishedWithTheLease(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	acfg := testConfig(id, "a", srv.URL())
	acfg.Metadata = map[string]string{"addr": "10.0.0.7:8080", "zone": "eu-1"}
	a := startNode(t, acfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, testConfig(id, "b", srv.URL()), rec, nil)
	obs, err := NewObserver(testConfig(id, "watcher", srv.URL()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := obs.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopNode(t, obs) })

	for _, n := range []*Node{a, b, obs} {
		natstest.WaitFor(t, 5*time.Second, func() bool { _, ok := n.Lease(); return ok }, "%s: no leader info", n.Config().NodeID)
		info, _ := n.Lease()
		if info.NodeID != "a" || info.Epoch != a.Epoch() || info.Metadata["addr"] != "10.0.0.7:8080" || info.Metadata["zone"] != "eu-1" {
			t.Errorf("%s: Lease() = %+v", n.Config().NodeID, info)
		}
		info.Metadata["addr"] = "changed" // a copy: the node's view stays
	}
	if info, _ := b.Lease(); info.Metadata["addr"] != "10.0.0.7:8080" {
		t.Errorf("Lease's metadata is not a copy: %v", info.Metadata)
	}

	kv := openKV(t, srv.URL(), id)
	ent, err := kv.Get(ctx(t), wire.LeaseKey)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		NodeID   string            `json:"node_id"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(ent.Value(), &raw); err != nil {
		t.Fatalf("lease value %s: %v", ent.Value(), err)
	}
	if raw.NodeID != "a" || raw.Metadata["addr"] != "10.0.0.7:8080" {
		t.Errorf("lease record as a KV client reads it: %s", ent.Value())
	}

	// A released record carries no holder and no metadata.
	if err := a.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { info, ok := obs.Lease(); return ok && info.NodeID == "b" }, "observer did not see b lead")
	if info, _ := obs.Lease(); len(info.Metadata) != 0 {
		t.Errorf("b has no metadata, its lease record says %v", info.Metadata)
	}
	rec.check(t)
}

func TestInvalidMetadataIsRefused(t *testing.T) {
	t.Parallel()
	for name, md := range map[string]map[string]string{
		"empty key": {"": "x"},
		"space":     {"my addr": "x"},
		"wildcard":  {"a>": "x"},
		"too large": {"addr": strings.Repeat("x", maxMetadataSize)},
	} {
		cfg := testConfig("c", "n", "nats://127.0.0.1:4222")
		cfg.Metadata = md
		err := cfg.check()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "Metadata") {
			t.Errorf("%s: Validate() = %v, want ErrInvalidConfig naming Metadata", name, err)
		}
	}
}

// Events delivers the hooks as values, in the hooks' order, starting with
// the leader known now; the channel closes with its ctx and at Stop.
func TestEventsDeliversLeadershipEvents(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNode(t, testConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	bcfg := testConfig(id, "b", srv.URL())
	b, err := NewNode(bcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	events := b.Events(context.Background()) // before Start
	if err := b.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	next := func() LeaderEvent {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("channel closed early")
			}
			return ev
		case <-time.After(5 * time.Second):
			t.Fatal("no event within 5s")
		}
		return LeaderEvent{}
	}
	if ev := next(); ev.Kind != LeaderChanged || ev.Leader != "" {
		t.Errorf("first event %+v, want LeaderChanged to nobody (not started)", ev)
	}
	if ev := next(); ev.Kind != LeaderChanged || ev.Leader != "a" {
		t.Errorf("event %+v, want LeaderChanged a", ev)
	}
	if err := a.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	ev := next()
	for ev.Kind == LeaderChanged && ev.Leader == "" { // a's release, seen before b's acquire
		ev = next()
	}
	if ev.Kind != BecameLeader || ev.Leader != "b" || ev.Ctx == nil || ev.Ctx.Err() != nil || ev.Epoch != firstEpoch(t, srv.URL(), id)+1 {
		t.Errorf("event %+v, want BecameLeader b at the bucket's second epoch with a live tenure", ev)
	}
	tenure := ev.Ctx
	if ev := next(); ev.Kind != LeaderChanged || ev.Leader != "b" {
		t.Errorf("event %+v, want LeaderChanged b", ev)
	}
	late, cancel := context.WithCancel(context.Background())
	lateEvents := b.Events(late)
	if ev := <-lateEvents; ev.Kind != LeaderChanged || ev.Leader != "b" {
		t.Errorf("a late subscriber's first event %+v, want the current leader b", ev)
	}
	cancel()
	natstest.WaitFor(t, 2*time.Second, func() bool { _, ok := <-lateEvents; return !ok }, "channel not closed with its ctx")

	stopNode(t, b)
	if tenure.Err() == nil {
		t.Error("tenure ctx live after Stop")
	}
	if ev := next(); ev.Kind != LostLeadership {
		t.Errorf("event %+v, want LostLeadership", ev)
	}
	natstest.WaitFor(t, 2*time.Second, func() bool {
		select {
		case _, ok := <-events:
			return !ok
		default:
			return false
		}
	}, "channel not closed after Stop")
	rec.check(t)
}

// A reader that falls observeBuffer events behind is dropped (its channel
// closed) rather than block the hooks.
func TestEventsDropsASlowReader(t *testing.T) {
	t.Parallel()
	n, err := NewNode(testConfig("c", "n", "nats://127.0.0.1:1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &eventFeed{node: n}
	slow := f.subscribe(context.Background(), LeaderEvent{})
	for range observeBuffer + 1 {
		if err := f.OnLeaderChange(context.Background(), "x"); err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	for range slow {
		got++
	}
	if got != observeBuffer {
		t.Errorf("slow reader got %d events before its channel closed, want %d", got, observeBuffer)
	}
}
