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
		if got := judge(c.e, bucket(0)).kind; got != c.want {
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

// §2.1, §2.4: an incarnation's base and a sequence's index count from
// its first sequence (first_seq), or from an epoch_base above it.
func TestBaseAndIndexFromTheFirstSequence(t *testing.T) {
	b := Incarnation{FirstSeq: 1000}
	if b.base() != 999 || b.index(999) != 0 || b.index(1000) != 1 || b.index(1005) != 6 {
		t.Errorf("first_seq 1000: base %d, indices %d %d %d; want 999, 0 1 6", b.base(), b.index(999), b.index(1000), b.index(1005))
	}
	b.EpochBase = 5000
	if b.base() != 5000 || b.index(1005) != 6 {
		t.Errorf("epoch_base 5000: base %d, index %d; want 5000, 6", b.base(), b.index(1005))
	}
	if old := (Incarnation{}); old.base() != 0 || old.index(7) != 7 {
		t.Errorf("no first_seq (a bucket moved from protocol 2): base %d, index %d; want 0, 7", old.base(), old.index(7))
	}
}

// P1, §2.4: judged by the incarnation a node follows, an entry of an older
// one (a watch served by a server behind) is out of range, and a record of
// a newer one is in range: its epoch and revision are above every one of
// the older (§3.6), so a node a server behind kept on the old incarnation
// still waits out the newer one's records for their TTL.
func TestEntriesOfOtherIncarnationsJudgedByTheOneFollowed(t *testing.T) {
	x, y := Incarnation{FirstSeq: 1000, Protocol: wire.Protocol}, Incarnation{FirstSeq: 5000, Protocol: wire.Protocol}
	if d := judge(put(1002, record("b", 1000, "")), y); d.kind != Unknown {
		t.Errorf("a record of the older incarnation judged in the newer: %v, want unknown", d.kind)
	}
	if d := judge(put(5001, record("b", 5000, "")), x); d.kind != Held {
		t.Errorf("a record of the newer incarnation judged in the older: %v, want held", d.kind)
	}
}

// P6, P7: a fresh bucket's first election waits the ceiling less the
// bucket's age, creates at the last sequence it confirmed, one below the
// first, and leads on the Create's acknowledgement.
func TestColdStartInAFreshBucket(t *testing.T) {
	h := newHarness(t, params("a"))
	fresh := bucket(999)
	fresh.FirstSeq, fresh.EpochBase = 1000, 0
	fresh.Age = 500 * time.Millisecond
	h.open(fresh) // its last Confirm gives the absent key's ceiling and last sequence (P4)
	if got, want := h.armed(), t0.Add(ttl-500*time.Millisecond); !got.Equal(want) {
		t.Fatalf("armed %v, want the ceiling less the age: %v", got.Sub(t0), want.Sub(t0))
	}
	h.at(ttl - 500*time.Millisecond).do(Tick{})
	w := h.write()
	if !w.Create || w.LastSeq != 999 {
		t.Fatalf("want a Create at last sequence 999, got %+v", w)
	}
	h.do(WriteResult{ID: w.ID, Rev: 1000})
	h.none("Confirm")
	b := h.become()
	if b.Epoch != 1000 || b.Cause != CauseCreated {
		t.Errorf("became %+v, want epoch 1000 (the first sequence) created", b)
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

// §4.11, P7: a takeover after expiry is one round trip, its Write: the
// acknowledgement of a compare-and-swap on a revision, which names its
// incarnation, proves the landing (§3.5).
func TestTakeoverAfterExpiryIsOneRoundTrip(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("b", base+3, "")))
	h.none("Write", "Confirm")
	h.at(ttl / 2).do(Tick{})
	h.want("Confirm") // P15, half way through the wait: not on the takeover's path
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(5)})
	h.at(ttl).do(Tick{})
	w := h.write()
	if w.Rev != 5 || w.Create {
		t.Fatalf("want a CAS on 5, got %+v", w)
	}
	h.do(WriteResult{ID: w.ID, Rev: 6})
	h.none("Confirm")
	if b := h.become(); b.Epoch != base+4 || b.Cause != CauseExpired || b.Rev != 6 {
		t.Errorf("became %+v, want epoch base+4 expired at revision 6", b)
	}
}

// P7: a write that went unanswered or lost its race leads nothing.
func TestAnUnacknowledgedAcquisitionLeadsNothing(t *testing.T) {
	for name, r := range map[string]WriteResult{
		"timeout":   {Err: errors.New("timeout"), Class: Transient},
		"lost race": {Err: errors.New("wrong last sequence"), Class: Conflict},
	} {
		h := newHarness(t, params("a"))
		h.open(bucket(5), put(5, record("", base+3, "")))
		r.ID = h.write().ID
		h.do(r)
		h.none("Become")
		if s := h.m.State(); s != Following {
			t.Errorf("%s: state %v, want following", name, s)
		}
	}
}

// C4, §2.1: a Confirm naming an incarnation older than the one followed
// comes from a server behind on a bucket deleted since (a server rejoining
// after a partition answers for the stream it still has: internal/natstest's
// zombie test); it is not followed, and asked again later.
func TestAConfirmNamingAnOlderIncarnationIsNotFollowed(t *testing.T) {
	h := newHarness(t, params("a"))
	cur := bucket(5)
	cur.FirstSeq = 3
	h.open(cur, put(5, record("b", base+3, "")))
	h.at(ttl / 2).do(Tick{})
	h.want("Confirm") // half way through the wait (P15)
	older := bucket(1)
	older.FirstSeq, older.Created = 1, older.Created.Add(-time.Minute)
	h.do(ConfirmResult{ID: h.reqID(), Bucket: older})
	h.none("Watch", "Write")
	if !h.m.inc.Same(cur) || h.m.cur.kind != Held {
		t.Errorf("moved to the older incarnation: %+v, key %v", h.m.inc, h.m.cur.kind)
	}
}

// §2.1, §5.4: a bucket without the election's metadata (created again by
// another tool) is no bucket to lead in: the node demotes, campaigns no
// more, and looks for it again, as for a deleted one.
func TestABucketWithoutTheElectionsMetadataLeadsNothing(t *testing.T) {
	h := leader(t)
	h.at(ttl / 4).do(Entry{KV: put(8, []byte("garbage"))}) // P9: demotes
	h.want("Lose")
	h.want("Confirm") // an unknown value's ceiling (P4)
	bare := bucket(8)
	bare.Protocol, bare.LeaseTTL, bare.MaxTTL = 0, 0, 0
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bare})
	h.none("Write", "Watch")
	if h.m.incKnown || h.m.State() != Syncing {
		t.Errorf("state %v, incarnation known %v: want syncing, looking for the bucket again", h.m.State(), h.m.incKnown)
	}
}

// I2, §2.7: a tenure's TTL is the bucket's, never above the members
// bucket's ceiling, which also bounds every wait for the ceiling from
// below: a bucket created again with a shorter TTL than the cluster's
// shortens neither.
func TestTheClusterCeilingBoundsTenuresAndWaits(t *testing.T) {
	h := newHarness(t, params("a"))
	b := bucket(5)
	b.LeaseTTL, b.MaxTTL, b.ClusterMaxTTL = 3*time.Second, 3*time.Second, ttl
	h.open(b, put(5, record("", base+3, "")))
	if l, err := wire.DecodeLease(h.write().Value, 6); err != nil || l.TTLMillis != ttl.Milliseconds() {
		t.Errorf("the tenure's record says ttl %dms (%v), want the cluster's ceiling %v", l.TTLMillis, err, ttl)
	}

	h = newHarness(t, params("a"))
	b = bucket(5)
	b.LeaseTTL, b.MaxTTL, b.ClusterMaxTTL = ttl/2, ttl/2, 3*ttl
	h.open(b, put(5, []byte("garbage")))
	if got := h.armed(); !got.Equal(t0.Add(3 * ttl)) {
		t.Errorf("garbage waited until +%v, want the cluster's ceiling, +%v", got.Sub(t0), 3*ttl)
	}
}

// P5: a hand-back is taken at once.
func TestHandBackIsTakenAtOnce(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("b", base+3, "")))
	h.do(Entry{KV: put(6, record("", base+3, ""))})
	w := h.write()
	h.do(WriteResult{ID: w.ID, Rev: 7})
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
	h.become()
	return h
}

// P7, P8: a renewal moves the deadline on its acknowledgement, from its
// send time; one a conflict answers moves nothing.
func TestRenewalMovesTheDeadlineOnItsAcknowledgement(t *testing.T) {
	h := leader(t)
	h.at(500 * time.Millisecond).do(Tick{})
	w := h.write()
	if w.Purpose != Renew || w.Rev != 7 {
		t.Fatalf("want a renewal on 7, got %+v", w)
	}
	h.at(600 * time.Millisecond).do(WriteResult{ID: w.ID, Rev: 8})
	h.none("Confirm")
	var ext Extend
	for _, a := range h.out {
		if e, ok := a.(Extend); ok {
			ext = e
		}
	}
	if want := t0.Add(500 * time.Millisecond).Add(ttl - ttl/10); !ext.Deadline.Equal(want) {
		t.Errorf("extended to +%v, want the renewal's send + TTL - margin: +%v", ext.Deadline.Sub(t0), want.Sub(t0))
	}
	h.at(time.Second).do(Tick{})
	h.do(WriteResult{ID: h.write().ID, Err: errors.New("wrong last sequence"), Class: Conflict})
	h.none("Extend")
}

// §4.2: a leader speaking one protocol sends its renewals and nothing
// else: a renewal is one request, with no Confirm once a TTL.
func TestALeaderSpeakingOneProtocolSendsOnlyItsRenewals(t *testing.T) {
	h := leader(t)
	rev, next := uint64(7), h.armed()
	renewals := 0
	for h.now.Before(t0.Add(5 * ttl)) {
		out := h.at(next.Sub(t0)).do(Tick{})
		for len(out) > 0 {
			a := out[0]
			out = out[1:]
			switch r := a.(type) {
			case Arm:
				next = r.At
			case Write:
				rev, renewals = rev+1, renewals+1
				out = append(out, h.do(WriteResult{ID: r.ID, Rev: rev})...)
			case Confirm, Watch:
				t.Fatalf("at +%v the leader sent a %T: only renewals are due", h.now.Sub(t0), a)
			}
		}
		if !next.After(h.now) {
			t.Fatalf("at +%v nothing out and no wake armed", h.now.Sub(t0))
		}
	}
	if want := int(5 * ttl / (500 * time.Millisecond)); renewals < want-1 {
		t.Errorf("%d renewals in 5 TTLs, want about %d", renewals, want)
	}
}

// §4.4, §5.6: a leader reads the bucket no more while it leads, so a node
// that stepped down reads it before it leads again: a TTL changed meanwhile
// reaches its next tenure, though it takes back its own release. Not at
// the release: the successor's takeover would share the server with it.
func TestAStepDownReadsTheBucketBeforeItLeadsAgain(t *testing.T) {
	h := leader(t)
	h.at(100 * time.Millisecond).do(StepDown{Token: 9})
	h.do(LoseHook{Epoch: base + 4})
	h.do(LoseHook{Epoch: base + 4, Done: true})
	h.do(WriteResult{ID: h.write().ID, Rev: 8})
	h.none("Confirm")
	h.at(100*time.Millisecond + ttl + time.Millisecond).do(Tick{}) // past its cooldown
	c, ok := h.req.(Confirm)
	if !ok {
		t.Fatalf("past its cooldown the node sent %s, want a Confirm before its takeover", h.kinds())
	}
	b := bucket(8)
	b.LeaseTTL, b.MaxTTL, b.ClusterMaxTTL = 3*time.Second, 3*time.Second, 3*time.Second
	h.do(ConfirmResult{ID: c.ID, Bucket: b})
	l, err := wire.DecodeLease(h.write().Value, 0)
	if err != nil || l.TTLMillis != 3000 {
		t.Errorf("the next tenure's record: %+v, %v; want ttl_ms 3000, the bucket's since the step-down", l, err)
	}
}

// P8: unacknowledged renewals end the tenure at its deadline.
func TestDeadlineEndsATenureWithoutAcknowledgedRenewals(t *testing.T) {
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
	other := bucket(100) // created again: its sequences above every old one (§2.1)
	other.FirstSeq, other.Created = 100, t0
	h.do(ConfirmResult{ID: h.reqID(), Bucket: other})
	h.want("Watch")
	h.none("Write")
}

// Simulator seed 3405: entries of the old watch kept while the Confirm
// that found another incarnation was out are dropped with it: they are
// the old incarnation's.
func TestMovingToAnotherIncarnationDropsTheOldWatchsEntries(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(3), put(3, record("b", base+2, "")))
	h.do(Entry{KV: put(4, record("b", base+2, ""))})
	h.at(ttl / 2).do(Tick{})
	h.want("Confirm")
	h.do(Entry{KV: KVEntry{Rev: 5, Op: Delete}}) // kept: the Confirm is out
	other := bucket(99)
	other.FirstSeq, other.Created = 100, t0
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
	if d := judge(put(8, w.Value), bucket(8)); d.lease.Priority != 7 {
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
	h.at(sent + 900*time.Millisecond).do(Entry{KV: put(7, w.Value)}) // the Create landed: its own value (P7)
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
	h.do(WriteResult{ID: w.ID, Rev: 6})
	if got, want := h.become().Deadline, t0.Add(15*time.Second-1500*time.Millisecond); !got.Equal(want) {
		t.Errorf("deadline +%v, want the write's send + 15s - 1.5s: +%v", got.Sub(t0), want.Sub(t0))
	}
}

// §4.1: a campaign waits for the watch to show the key's current value;
// View.Synced says it has.
func TestSyncedFollowsTheWatch(t *testing.T) {
	h := newHarness(t, params("a"))
	h.do(Start{})
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(5)})
	h.do(WatchStarted{ID: h.reqID()})
	if h.m.Snapshot().Synced {
		t.Fatal("synced before the watch showed the key")
	}
	h.do(Entry{KV: put(5, record("b", base+3, ""))})
	h.do(Synced{})
	h.want("LeaderChange")
	if v := h.m.Snapshot(); v.Lease.NodeID != "b" || !v.Synced {
		t.Fatalf("after Synced: %+v, want b's record, synced", v)
	}
}

// P7: an unanswered acquisition leads only on its own value: another
// node's record at the revision after the one it wrote over is that
// node's landing, not its own.
func TestAnotherNodesRecordIsNoLandingOfOurs(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, record("", base+3, "")))
	h.do(WriteResult{ID: h.write().ID, Err: errors.New("timeout"), Class: Transient}) // may land: pending
	h.do(Entry{KV: put(6, wire.Lease{NodeID: "a", Instance: "other", Epoch: base + 4, TTLMillis: 2000}.Encode())})
	h.none("Become")
	h.do(Entry{KV: put(7, record("b", base+4, ""))})
	h.none("Become")
	if h.m.leading(h.now) {
		t.Fatal("leading on another's record")
	}
}

// P5, P7: a release is taken at once only as a hand-back, after the
// record of its tenure the watch showed and a Confirm named the
// incarnation of; a release seen first is confirmed first.
func TestAReleaseNotAfterItsTenureIsConfirmedFirst(t *testing.T) {
	h := newHarness(t, params("a"))
	h.do(Start{})
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(5)})
	h.do(WatchStarted{ID: h.reqID()})
	h.do(Entry{KV: put(5, record("", base+3, ""))})
	h.do(Synced{})
	h.none("Write")
	h.want("Confirm")
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(5)})
	if w := h.write(); w.Rev != 5 || w.Purpose != Acquire {
		t.Fatalf("want the release taken once confirmed, got %+v", w)
	}
}

// §3.5, §5.8: after a move to another incarnation, its answers are judged
// by the revisions seen in it: a bucket restored and rebased, whose
// sequences went back below what the node saw before, is not taken for a
// server behind for ever.
func TestARebasedIncarnationWithLowerRevisionsIsFollowed(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(50), put(50, record("b", base+40, "")))
	h.at(ttl / 2).do(Tick{})
	h.want("Confirm") // half way (P15)
	restored := bucket(20)
	restored.EpochBase += 1_000_000 // init --rebase
	h.do(ConfirmResult{ID: h.reqID(), Bucket: restored})
	h.want("Watch")
	h.do(WatchStarted{ID: h.reqID()})
	h.do(Entry{KV: put(20, record("b", base+10, ""))}) // below the new base: unknown
	h.do(Synced{})
	h.want("Confirm")
	h.do(ConfirmResult{ID: h.reqID(), Bucket: restored})
	if !h.m.cur.checked.Equal(h.now) || !h.m.inc.Same(restored) {
		t.Fatalf("the rebased incarnation's answer (last sequence 20) was taken for a server behind: checked %v, following %+v", h.m.cur.checked, h.m.inc)
	}
}
