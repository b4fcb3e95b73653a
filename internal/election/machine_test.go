package election

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

var base = bucket(0).base()

// §4.1, P1: what a value is.
func TestJudge(t *testing.T) {
	v1rec := []byte(`{"node_id":"a","epoch":5,"expires_at":"2026-01-01T00:00:00Z","acquired_at":"2026-01-01T00:00:00Z"}`)
	for _, c := range []struct {
		name string
		e    KVEntry
		want Kind
	}{
		{"held", put(3, record("a", base+2, "")), Held},
		{"released", put(3, record("", base+2, "b")), Released},
		{"a release above base + rev (P5: no hand-back out of range)", put(3, record("", base+4, "")), Unknown},
		{"epoch at the range's top", put(3, record("a", base+3, "")), Held},
		{"epoch above base + rev", put(3, record("a", base+4, "")), Unknown},
		{"epoch at base", put(3, record("a", base, "")), Unknown},
		{"garbage", put(3, []byte("{not json")), Unknown},
		{"a delete marker", KVEntry{Rev: 3, Op: Delete}, Unknown},
		{"a purge marker", KVEntry{Rev: 3, Op: Purge}, Unknown},
		{"protocol 1", put(3, v1rec), Unknown},
	} {
		if got := judge(c.e, base).kind; got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// §4.1, P2: the next epoch.
func TestNextEpoch(t *testing.T) {
	for _, c := range []struct {
		name         string
		kind         Kind
		epoch        int64
		rev, lastSeq uint64
		want         int64
	}{
		{"over a record: its epoch + 1", Held, base + 7, 9, 0, base + 8},
		{"over a release: its epoch + 1", Released, base + 7, 9, 0, base + 8},
		{"over garbage: base + revision + 1", Unknown, 0, 9, 0, base + 10},
		{"into an absent key: base + last sequence + 1", Absent, 0, 0, 12, base + 13},
	} {
		got, err := nextEpoch(c.kind, c.epoch, c.rev, c.lastSeq, base)
		if err != nil || got != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		}
	}
	if _, err := nextEpoch(Held, 1<<63-1, 1, 0, 0); !errors.Is(err, wire.ErrEpochExhausted) {
		t.Errorf("at the largest int64: %v, want wire.ErrEpochExhausted", err)
	}
}

// P6 and P7: a fresh bucket's first election waits the ceiling less the
// bucket's age, creates at the last sequence it confirmed, and leads
// once the landing is confirmed.
func TestColdStartInAFreshBucket(t *testing.T) {
	h := newHarness(t, params("a"))
	fresh := bucket(0)
	fresh.Age = 500 * time.Millisecond
	h.open(fresh) // its last Confirm gives the absent key's ceiling and last sequence (P4)
	if got, want := h.armed(), t0.Add(ttl-500*time.Millisecond); !got.Equal(want) {
		t.Fatalf("armed %v, want the ceiling less the age: %v", got.Sub(t0), want.Sub(t0))
	}
	h.at(ttl - 500*time.Millisecond).do(Tick{})
	w := h.write()
	if !w.Create || w.LastSeq != 0 {
		t.Fatalf("want a Create at last sequence 0, got %+v", w)
	}
	h.do(WriteResult{ID: w.ID, Rev: 1})
	h.none("Become")
	h.want("Confirm")
	h.do(ConfirmResult{ID: h.reqID(), Bucket: fresh})
	b := h.become()
	if b.Epoch != fresh.base()+1 || b.Cause != CauseCreated {
		t.Errorf("became %+v, want epoch base+1 created", b)
	}
	if want := h.now.Add(ttl - ttl/10); !b.Deadline.Equal(want) {
		t.Errorf("deadline %v, want send time + TTL - margin", b.Deadline.Sub(t0))
	}
}

// P4: an absent key in a used bucket is waited for the whole ceiling,
// and its Create is checked against the last sequence confirmed.
func TestAbsentKeyInAUsedBucket(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(40))
	if got := h.armed(); !got.Equal(t0.Add(ttl)) {
		t.Fatalf("armed %v, want the whole ceiling", got.Sub(t0))
	}
	h.at(ttl).do(Tick{})
	if w := h.write(); !w.Create || w.LastSeq != 40 {
		t.Fatalf("want a Create at last sequence 40, got %+v", w)
	}
}

// §7: a takeover after expiry is two round trips, Write and Confirm.
func TestTakeoverAfterExpiryIsTwoRoundTrips(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("b", base+3, "")))
	h.none("Write", "Confirm")
	h.at(ttl).do(Tick{})
	w := h.write()
	if w.Rev != 5 || w.Create {
		t.Fatalf("want a CAS on 5, got %+v", w)
	}
	h.do(WriteResult{ID: w.ID, Rev: 6})
	h.want("Confirm")
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(6)})
	if b := h.become(); b.Epoch != base+4 || b.Cause != CauseExpired {
		t.Errorf("became %+v, want epoch base+4 expired", b)
	}
}

// P7: the Confirm of a landing goes out with the write (Write.Landing):
// the driver asks as soon as the write's answer is in, and the machine
// leads on the answer it brings, sending nothing more.
func TestALandingConfirmedWithTheWriteLeadsAtOnce(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("", base+3, "")))
	w := h.write()
	if w.Landing != 300*time.Millisecond {
		t.Fatalf("the takeover asks for its Confirm with %v, want RequestTimeout", w.Landing)
	}
	h.do(WriteResult{ID: w.ID, Rev: 6, Landing: &ConfirmResult{Bucket: bucket(6)}})
	h.none("Confirm")
	if b := h.become(); b.Epoch != base+4 || b.Rev != 6 {
		t.Errorf("became %+v, want epoch base+4 at revision 6", b)
	}
}

// P7: a Confirm brought with the write that failed is asked again; one
// that names another incarnation leads nothing.
func TestALandingConfirmBroughtWithTheWriteIsJudgedLikeAnother(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("", base+3, "")))
	w := h.write()
	h.do(WriteResult{ID: w.ID, Rev: 6, Landing: &ConfirmResult{Err: errors.New("timeout"), Class: Transient}})
	h.none("Become")
	h.want("Confirm")
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(6)})
	h.become()

	h = newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("", base+3, "")))
	other := bucket(6)
	other.Created = t0.Add(-time.Minute)
	h.do(WriteResult{ID: h.write().ID, Rev: 6, Landing: &ConfirmResult{Bucket: other}})
	h.none("Become")
	h.want("Watch")
}

// P7, §3.5: a landing delivered by a consumer a Confirm pinned to the
// incarnation followed is in it: the node leads without a Confirm.
func TestALandingThePinnedConsumerDeliveredLeadsAtOnce(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("", base+3, "")))
	w := h.write()
	h.do(WriteResult{ID: w.ID, Rev: 6, Seen: &KVEntry{Rev: 6, Value: w.Value, Consumer: "c1"}})
	h.none("Confirm")
	if b := h.become(); b.Epoch != base+4 || b.Rev != 6 {
		t.Errorf("became %+v, want epoch base+4 at revision 6", b)
	}
}

// P7, §3.5: a delivery proves a landing only if a pinned consumer made
// it and it is the write's own: one by another consumer (a reset, maybe
// onto a bucket created again), at another revision, or of another
// value is confirmed.
func TestALandingAnUnpinnedConsumerDeliveredIsConfirmed(t *testing.T) {
	for name, seen := range map[string]func(w Write) KVEntry{
		"another consumer": func(w Write) KVEntry { return KVEntry{Rev: 6, Value: w.Value, Consumer: "c2"} },
		"no consumer":      func(w Write) KVEntry { return KVEntry{Rev: 6, Value: w.Value} },
		"another revision": func(w Write) KVEntry { return KVEntry{Rev: 7, Value: w.Value, Consumer: "c1"} },
		"another value":    func(w Write) KVEntry { return KVEntry{Rev: 6, Value: record("a", base+4, ""), Consumer: "c1"} },
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, params("a"))
			h.open(bucket(5), put(5, record("", base+3, "")))
			w := h.write()
			s := seen(w)
			h.do(WriteResult{ID: w.ID, Rev: 6, Seen: &s})
			h.none("Become")
			h.want("Confirm")
			h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(6)})
			h.become()
		})
	}
}

// §3.5: a Confirm pins the consumer that delivered what was seen when it
// was sent; a consumer that came after it (a reset) is pinned by the
// next; a new watch's consumer by its own.
func TestAConfirmPinsTheConsumerThatDeliveredBeforeIt(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("b", base+3, "")))
	h.do(Entry{KV: KVEntry{Rev: 6, Op: Put, Value: record("b", base+3, ""), Consumer: "c2"}}) // b renewed, seen by a reset consumer
	h.at(ttl / 2).do(Tick{})
	h.want("Confirm") // half way through the wait (P15)
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(6)})
	h.do(Entry{KV: KVEntry{Rev: 7, Op: Put, Value: record("", base+3, ""), Consumer: "c2"}})
	w := h.write()
	h.do(WriteResult{ID: w.ID, Rev: 8, Seen: &KVEntry{Rev: 8, Value: w.Value, Consumer: "c2"}})
	h.none("Confirm")
	h.become()
}

// C4, §3.6: a Confirm naming an incarnation created before the one
// followed comes from a server behind on a bucket deleted since (a
// server rejoining after a partition answers for the stream it still
// has: internal/natstest's zombie test); it is not followed and proves no
// landing.
func TestAConfirmNamingAnOlderIncarnationIsNotFollowed(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("", base+3, "")))
	w := h.write()
	older := bucket(6)
	older.Created = older.Created.Add(-time.Minute)
	h.do(WriteResult{ID: w.ID, Rev: 6, Landing: &ConfirmResult{Bucket: older}})
	h.none("Become", "Watch")
	h.want("Confirm")
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(6)})
	h.become()
}

// P5: a hand-back is taken at once.
func TestHandBackIsTakenAtOnce(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("b", base+3, "")))
	h.do(Entry{KV: put(6, record("", base+3, ""))})
	w := h.write()
	h.do(WriteResult{ID: w.ID, Rev: 7})
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(7)})
	if b := h.become(); b.Epoch != base+4 || b.Cause != CauseReleased {
		t.Errorf("became %+v, want epoch base+4 released", b)
	}
}

// P12: a release naming another node holds this one off for RenewInterval.
func TestNamedSuccessorFirst(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("", base+3, "c")))
	h.none("Write")
	if got := h.armed(); !got.Equal(t0.Add(500 * time.Millisecond)) {
		t.Fatalf("armed %v, want RenewInterval", got.Sub(t0))
	}
}

// P7, I3: a landing confirmed in another incarnation leads nothing, and
// the node follows the new one from a new watch.
func TestLandingInAnotherIncarnationLeadsNothing(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("", base+3, "")))
	w := h.write()
	h.do(WriteResult{ID: w.ID, Rev: 6})
	other := bucket(6)
	other.Created = t0.Add(-time.Minute)
	h.do(ConfirmResult{ID: h.reqID(), Bucket: other})
	h.none("Become")
	h.want("Watch")
	if s := h.m.State(); s != Syncing {
		t.Errorf("state %v, want syncing", s)
	}
}

// P1, P4: garbage is waited out for the ceiling read after first sight,
// then taken over at base + revision + 1.
func TestGarbageWaitsTheCeiling(t *testing.T) {
	h := newHarness(t, params("a"))
	longer := bucket(5)
	longer.MaxTTL = 3 * ttl
	h.open(longer, put(5, []byte("{not json")))
	if got := h.armed(); !got.Equal(t0.Add(3 * ttl)) {
		t.Fatalf("armed %v, want the bucket's longest TTL", got.Sub(t0))
	}
	h.at(3 * ttl).do(Tick{})
	w := h.write()
	h.do(WriteResult{ID: w.ID, Rev: 6})
	h.do(ConfirmResult{ID: h.reqID(), Bucket: longer})
	if b := h.become(); b.Epoch != base+6 {
		t.Errorf("epoch %d, want base+6", b.Epoch)
	}
}

// P4: a held record that does not say its TTL (written by hand, say) is
// waited out for the ceiling, like an unknown value: a leader that sees
// it demotes, and does not take it over at once.
func TestHeldRecordWithoutTTLWaitsTheCeiling(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, wire.Lease{NodeID: "b", Epoch: base + 3}.Encode()))
	if got := h.armed(); !got.Equal(t0.Add(ttl)) {
		t.Fatalf("armed %v, want the ceiling (%v)", got.Sub(t0), ttl)
	}
	h.none("Write")
	h.at(ttl).do(Tick{})
	w := h.write()
	if w.Rev != 5 {
		t.Errorf("took over revision %d, want 5", w.Rev)
	}
}

// P3: a reconnect starts the wait again.
func TestReconnectRestartsTheWait(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("b", base+3, "")))
	h.at(ttl / 2).do(Conn{Connected: true, Reconnects: 1})
	if got := h.armed(); !got.Equal(t0.Add(ttl)) {
		t.Fatalf("armed %v, want the check half a TTL after the reconnect", got.Sub(t0))
	}
	h.at(ttl).do(Tick{})
	h.want("Confirm") // P15: a record unchanged half way through its wait
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(5)})
	h.none("Write", "Confirm")
	if got := h.armed(); !got.Equal(t0.Add(ttl / 2).Add(ttl)) {
		t.Fatalf("armed %v, want a whole TTL from the reconnect", got.Sub(t0))
	}
}

// P3: a value is waited out from when it was first seen: a renewal the
// watch shows is a new value, and starts the wait again.
func TestARenewalSeenStartsTheWaitAgain(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("b", base+3, "")))
	h.at(ttl / 4).do(Entry{KV: put(6, record("b", base+3, ""))})
	h.at(ttl).do(Tick{})
	h.want("Confirm") // P15: unchanged half way through its wait
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(6)})
	h.none("Write")
	if got := h.armed(); !got.Equal(t0.Add(ttl/4 + ttl)) {
		t.Fatalf("armed %v, want a whole TTL from the renewal", got.Sub(t0))
	}
}

// leader brings a harness to leading at epoch base+4, revision 7.
func leader(t *testing.T) *harness {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("", base+3, "")))
	w := h.write()
	h.do(WriteResult{ID: w.ID, Rev: 7})
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(7)})
	h.become()
	return h
}

// P7, P8: a renewal moves the deadline only once confirmed.
func TestRenewalMovesTheDeadlineOnceConfirmed(t *testing.T) {
	h := leader(t)
	h.at(500 * time.Millisecond).do(Tick{})
	w := h.write()
	if w.Purpose != Renew || w.Rev != 7 {
		t.Fatalf("want a renewal on 7, got %+v", w)
	}
	h.do(WriteResult{ID: w.ID, Rev: 8})
	h.none("Extend")
	h.want("Confirm")
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(8)})
	h.want("Extend")
}

// P7: a renewal confirmed in another incarnation ends the tenure.
func TestRenewalInAnotherIncarnationEndsTheTenure(t *testing.T) {
	h := leader(t)
	h.at(500 * time.Millisecond).do(Tick{})
	h.do(WriteResult{ID: h.write().ID, Rev: 8})
	other := bucket(8)
	other.Created = t0
	h.do(ConfirmResult{ID: h.reqID(), Bucket: other})
	h.want("Lose")
	h.none("Extend")
}

// P8: unconfirmed renewals end the tenure at its deadline.
func TestDeadlineEndsATenureWithoutConfirmedRenewals(t *testing.T) {
	h := leader(t)
	h.at(500 * time.Millisecond).do(Tick{})
	h.do(WriteResult{ID: h.write().ID, Err: errors.New("timeout"), Class: Transient})
	h.at(ttl - ttl/10).do(Tick{})
	h.want("Lose")
	if h.m.leading(h.now) {
		t.Error("still leading past the deadline")
	}
}

// P9: a foreign revision ends the tenure; the node's own late write is
// adopted.
func TestWhatTheLeaderSees(t *testing.T) {
	h := leader(t)
	h.do(Entry{KV: put(8, wire.Lease{NodeID: "a", Instance: "a-i", Epoch: base + 4, TTLMillis: 2000}.Encode())})
	h.none("Lose")
	if h.m.t.rev != 8 {
		t.Fatalf("own late write not adopted: rev %d", h.m.t.rev)
	}
	h.do(Entry{KV: put(9, []byte("garbage"))})
	h.want("Lose")
}

// P10: a lost race the watch does not explain reopens the watch.
func TestLostRaceReopensTheWatch(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("", base+3, "")))
	h.do(WriteResult{ID: h.write().ID, Err: errors.New("wrong last sequence"), Class: Conflict})
	h.none("Write")
	h.at(300 * time.Millisecond).do(Tick{})
	h.want("Watch")
}

// P11: a step-down renews while OnLoseLeadership runs, then releases,
// then cools down.
func TestStepDownDrainsThenReleases(t *testing.T) {
	h := leader(t)
	h.do(StepDown{Token: 9})
	h.want("Lose")
	h.none("Reply")
	h.do(LoseHook{Epoch: base + 4})
	h.do(LoseHook{Epoch: base + 4, Done: true})
	w := h.write()
	if w.Purpose != Release {
		t.Fatalf("want the release, got %+v", w)
	}
	h.do(WriteResult{ID: w.ID, Rev: 8})
	h.want("Reply", "CooldownKey")
	if s := h.m.State(); s != Following {
		t.Errorf("state %v, want following", s)
	}
}

// P12: a step-down whose release fails still keeps the node out for its
// Cooldown: the lease expires instead, and the node that stepped down must
// not win it back at once (TestStateJSClusterSuccessorReadsLastWriteAfterStreamLeaderDies).
func TestStepDownCoolsDownWhenTheReleaseFails(t *testing.T) {
	h := leader(t)
	h.do(StepDown{Token: 9})
	h.do(LoseHook{Epoch: base + 4})
	h.do(LoseHook{Epoch: base + 4, Done: true})
	for range 3 {
		w := h.write()
		if w.Purpose != Release {
			t.Fatalf("want the release, got %+v", w)
		}
		h.do(WriteResult{ID: w.ID, Err: errors.New("no stream leader"), Class: Transient})
	}
	h.want("Reply", "CooldownKey")
}

// §6.4: a record of protocol 1 is unknown here, said at ERROR (Start,
// in the driver, refuses a bucket holding one); a bucket marked for
// another protocol stops the machine.
func TestAnotherProtocolRefusesToStart(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, []byte(`{"node_id":"b","epoch":4,"expires_at":"2026-01-01T00:00:00Z","acquired_at":"2026-01-01T00:00:00Z"}`)))
	said := false
	for _, a := range h.all {
		if _, ok := a.(Finished); ok {
			t.Fatalf("a record of protocol 1 stopped the machine: [%s]", h.kinds())
		}
		if l, ok := a.(Log); ok && l.Level == slog.LevelError {
			said = true
		}
	}
	if !said {
		t.Errorf("a record of protocol 1 was not logged at ERROR: [%s]", h.kinds())
	}

	h = newHarness(t, params("a"))
	h.do(Start{})
	old := bucket(5)
	old.Protocol = 1
	h.do(ConfirmResult{ID: h.reqID(), Bucket: old})
	if f := h.finished(); !errors.Is(f.Err, wire.ErrProtocolVersion) {
		t.Errorf("a bucket of protocol 1: finished with %v, want ErrProtocolVersion", f.Err)
	}
}

// Simulator seed 37978: entries the watch a node starts with delivered
// while its first Confirm was out belong to that watch, not to the one
// the node opens after it (here another incarnation's purge marker at a
// revision the new incarnation's live record also had).
func TestEntriesOfAReplacedWatchAreDropped(t *testing.T) {
	h := newHarness(t, params("a"))
	h.do(Start{})
	h.do(Entry{KV: KVEntry{Rev: 1, Op: Purge}}) // kept: a Confirm is out
	h.do(Synced{})
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(0)})
	h.want("Watch")
	h.do(WatchStarted{ID: h.reqID()})
	if h.m.cur.kind != None {
		t.Fatalf("the replaced watch's entry was observed: %v at %d", h.m.cur.kind, h.m.cur.rev)
	}
}

// Simulator seed 3278: an acquisition retried while the first went
// unanswered, the first landing, counts from the first's send time.
func TestUnansweredAcquisitionCountsFromTheFirstSend(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("", base+3, "")))
	first := h.write()
	h.do(WriteResult{ID: first.ID, Err: errors.New("timeout"), Class: Transient})
	h.at(time.Second).do(Tick{})
	if w := h.write(); w.ID == first.ID || w.Purpose != Acquire {
		t.Fatalf("want the acquisition retried, got %+v", w)
	}
	h.do(WriteResult{ID: h.reqID(), Err: errors.New("timeout"), Class: Transient})
	h.do(Entry{KV: put(6, first.Value)})
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(6)})
	if b := h.become(); !b.Deadline.Equal(t0.Add(ttl - ttl/10)) {
		t.Errorf("deadline +%v, want the first send + TTL - margin", b.Deadline.Sub(t0))
	}
}

// Simulator seed 27160: a node told to Stop campaigns no more, and its
// view of the key includes its own writes before the watch shows them.
func TestStopCampaignsNoMore(t *testing.T) {
	h := leader(t)
	h.do(Stop{})
	h.do(LoseHook{Epoch: base + 4})
	h.do(LoseHook{Epoch: base + 4, Done: true})
	h.do(WriteResult{ID: h.write().ID, Rev: 8})
	h.none("Write")
	h.want("Finished")
	if h.m.cur.kind != Released || h.m.cur.rev != 8 {
		t.Errorf("view %v at %d, want its own release at 8", h.m.cur.kind, h.m.cur.rev)
	}
}

// P15, simulator seeds 594 and 1840: a held record still unchanged half
// way through its wait is confirmed; a watch that moved to a bucket
// created again is found then, before any write.
func TestHalfWayCheckFindsAnotherIncarnation(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("b", base+3, "")))
	h.do(Entry{KV: put(6, record("b", base+3, ""))}) // a renewal, then nothing
	h.at(ttl / 2).do(Tick{})
	h.want("Confirm")
	other := bucket(1)
	other.Created = t0
	h.do(ConfirmResult{ID: h.reqID(), Bucket: other})
	h.want("Watch")
	h.none("Write")
}

// Simulator seed 3405: entries of the old watch kept while the Confirm
// that found another incarnation was out are dropped with it: the new
// incarnation's revisions start again, and an old marker at a revision
// the new bucket reaches later must not stand for it.
func TestMovingToAnotherIncarnationDropsTheOldWatchsEntries(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(3), put(3, record("b", base+2, "")))
	h.do(Entry{KV: put(4, record("b", base+2, ""))})
	h.at(ttl / 2).do(Tick{})
	h.want("Confirm")
	h.do(Entry{KV: KVEntry{Rev: 5, Op: Delete}}) // kept: the Confirm is out
	other := bucket(0)
	other.Created = t0
	h.do(ConfirmResult{ID: h.reqID(), Bucket: other})
	h.want("Watch")
	if h.m.cur.kind != None {
		t.Fatalf("the old watch's entry survived the move: cur %v at %d", h.m.cur.kind, h.m.cur.rev)
	}
}

// A priority set at run time (weighted checks) is what the leader's next
// record carries.
func TestSetPriorityReachesTheRecords(t *testing.T) {
	h := leader(t)
	h.do(SetPriority{Priority: 7})
	h.at(500 * time.Millisecond).do(Tick{})
	w := h.write()
	if d := judge(put(8, w.Value), base); d.lease.Priority != 7 {
		t.Fatalf("renewal carries priority %d, want 7", d.lease.Priority)
	}
}

// Simulator seeds 947061 and 981817 (liveness): of the unanswered
// acquisitions at one epoch, the one the watch shows landed is the one
// whose value it holds; its tenure counts from its own send time, not
// from an earlier attempt's, which could not have written that value.
func TestUnansweredAcquisitionThatLandedIsKnownByItsValue(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(6), KVEntry{Rev: 6, Op: Purge})
	h.at(ttl).do(Tick{})
	h.do(WriteResult{ID: h.write().ID, Err: errors.New("timeout"), Class: Transient}) // may land: pending
	h.at(ttl + 100*time.Millisecond).do(Tick{})
	h.do(WriteResult{ID: h.write().ID, Err: errors.New("wrong last sequence"), Class: Conflict})
	h.at(3 * time.Second).do(Tick{}) // the watch explained nothing: reopened, the key found compacted away
	h.want("Watch")
	h.do(WatchStarted{ID: h.reqID()})
	h.do(Synced{})
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(6)}) // absent at 6: waited from here
	sent := 3*time.Second + ttl
	h.at(sent).do(Tick{})
	w := h.write()
	if !w.Create || w.LastSeq != 6 {
		t.Fatalf("want a Create at 6, got %+v", w)
	}
	h.at(sent + 300*time.Millisecond).do(WriteResult{ID: w.ID, Err: errors.New("timeout"), Class: Transient})
	h.do(Entry{KV: put(7, w.Value)}) // the Create landed
	h.want("Confirm")
	h.at(sent + 900*time.Millisecond).do(ConfirmResult{ID: h.reqID(), Bucket: bucket(7)})
	b := h.become()
	if want := t0.Add(sent).Add(ttl - ttl/10); !b.Deadline.Equal(want) {
		t.Errorf("deadline +%v, want the Create's send time + TTL - margin: +%v", b.Deadline.Sub(t0), want.Sub(t0))
	}
}

// §4.10: the states of one life, as Machine.State derives them.
func TestStatesOfOneLife(t *testing.T) {
	h := newHarness(t, params("a"))
	state := func(want State) {
		t.Helper()
		if s := h.m.State(); s != want {
			t.Fatalf("at +%v: state %v, want %v", h.now.Sub(t0), s, want)
		}
	}
	state(Syncing)
	h.open(bucket(5), put(5, record("b", base+3, "")))
	state(Following)
	h.do(Entry{KV: put(6, record("", base+3, ""))})
	state(Acquiring)
	h.do(WriteResult{ID: h.write().ID, Rev: 7})
	state(Confirming)
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(7)})
	state(Leading)
	h.do(StepDown{Token: 9})
	state(Draining)
	h.do(LoseHook{Epoch: base + 4})
	h.do(LoseHook{Epoch: base + 4, Done: true})
	h.do(WriteResult{ID: h.write().ID, Rev: 8})
	state(Following)
	h.do(Stop{})
	state(Stopped)
}

// P8, §2.7: a tenure of the bucket's TTL has this node's SafetyMargin
// scaled to it, without overflow: 1 s for a LeaseTTL of 10 s is 1.5 s for
// a bucket's 15 s (1 s times 15 s, in ns, is above the largest int64).
func TestTheMarginScaledToTheBucketsTTLDoesNotOverflow(t *testing.T) {
	p := params("a")
	p.LeaseTTL, p.SafetyMargin, p.RenewInterval = 10*time.Second, time.Second, 3*time.Second
	h := newHarness(t, p)
	b := bucket(5)
	b.LeaseTTL, b.MaxTTL = 15*time.Second, 15*time.Second
	h.open(b, put(5, record("", base+3, "")))
	w := h.write()
	landed := b
	landed.LastSeq = 6
	h.do(WriteResult{ID: w.ID, Rev: 6, Landing: &ConfirmResult{Bucket: landed}})
	if got, want := h.become().Deadline, t0.Add(15*time.Second-1500*time.Millisecond); !got.Equal(want) {
		t.Errorf("deadline +%v, want the write's send + 15s - 1.5s: +%v", got.Sub(t0), want.Sub(t0))
	}
}

// §4.1, §4.11: the leader is reported as soon as the watch shows its
// record, one round trip before the Confirm after it that a campaign
// waits for; View.Confirmed tells the two apart, and stays false while
// that Confirm goes unanswered.
func TestConfirmedFollowsTheConfirmAfterTheWatch(t *testing.T) {
	h := newHarness(t, params("a"))
	h.do(Start{})
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(5)})
	h.do(WatchStarted{ID: h.reqID()})
	h.do(Entry{KV: put(5, record("b", base+3, ""))})
	h.do(Synced{})
	h.want("LeaderChange", "Confirm")
	if v := h.m.Snapshot(); v.Lease.NodeID != "b" || v.Confirmed {
		t.Fatalf("with the Confirm out: %+v, want b's record, not confirmed", v)
	}
	h.at(300 * time.Millisecond).do(ConfirmResult{ID: h.reqID(), Err: errors.New("timeout"), Class: Transient})
	if h.m.Snapshot().Confirmed {
		t.Fatal("confirmed after the Confirm failed")
	}
	h.want("Confirm") // asked again
	h.at(310 * time.Millisecond).do(ConfirmResult{ID: h.reqID(), Bucket: bucket(5)})
	if !h.m.Snapshot().Confirmed {
		t.Fatal("not confirmed after the Confirm's answer")
	}
}
