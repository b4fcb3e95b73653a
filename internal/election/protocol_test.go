package election

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// P16 (docs/design.md §5.9): the protocol versions of a mixed cluster.

// recordAt is record at protocol version v.
func recordAt(v int, node string, epoch int64) []byte {
	l, err := wire.DecodeLease(record(node, epoch, ""), 0)
	if err != nil {
		panic(err)
	}
	l.Version = v
	return l.Encode()
}

func versionOf(t *testing.T, value []byte) int {
	t.Helper()
	l, err := wire.DecodeLease(value, 0)
	if err != nil {
		t.Fatalf("the record written does not decode: %v", err)
	}
	return l.Version
}

// A record above the versions this node speaks is waited on, never
// written over: the node is not ready while the key holds it, and
// campaigns once a record it reads replaces it.
func TestARecordOfAVersionNotSpokenIsNeverWrittenOver(t *testing.T) {
	h := newHarness(t, params("a"))
	h.open(bucket(5), put(5, recordAt(wire.ProtocolHi+1, "b", base+3)))
	if v := h.m.Snapshot().Beyond; v != wire.ProtocolHi+1 {
		t.Errorf("Snapshot().Beyond = %d, want %d", v, wire.ProtocolHi+1)
	}
	logged := func() (n int) {
		for _, a := range h.all {
			if l, ok := a.(Log); ok && l.Level == slog.LevelError {
				n++
			}
		}
		return n
	}
	if logged() != 1 {
		t.Errorf("a record of protocol %d: %d lines at ERROR, want 1", wire.ProtocolHi+1, logged())
	}
	h.do(Entry{KV: put(6, recordAt(wire.ProtocolHi+1, "b", base+3))}) // its renewal
	if logged() != 1 {
		t.Errorf("its renewal logged again at ERROR: %d lines, want 1", logged())
	}
	for d := time.Duration(0); d < 5*ttl; d += 100 * time.Millisecond {
		h.at(d).do(Tick{})
		if _, ok := h.req.(Confirm); ok && h.m.req != nil {
			h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(6)})
		}
		h.none("Write")
	}
	h.at(5 * ttl).do(Entry{KV: put(7, wire.ReleasedRecord(0, base+3, t0, t0, ""))})
	if h.m.Snapshot().Beyond != 0 {
		t.Error("a record of this node's version replaced it, and Beyond is still set")
	}
	h.want("Confirm") // a release of a tenure not confirmed (P7)
	h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(7)})
	if w := h.write(); w.Purpose != Acquire || versionOf(t, w.Value) != wire.Protocol {
		t.Errorf("over the release of protocol %d: wrote %+v", wire.Protocol, w)
	}
}

// A takeover writes the version of the record it replaces, whatever
// higher one it speaks.
func TestATakeoverKeepsTheRecordsVersion(t *testing.T) {
	for _, c := range []struct{ record, members int }{
		{wire.Protocol, wire.Protocol + 1}, // the cluster has not switched: it switches at a renewal
		{wire.Protocol + 1, wire.Protocol}, // it has: a member of the old version joined since
	} {
		p := params("a")
		p.ProtocolHi = wire.Protocol + 1
		h := newHarness(t, p)
		b := bucket(5)
		b.MembersSpeak = c.members
		h.open(b, put(5, wire.ReleasedRecord(c.record, base+3, t0, t0, "")))
		if v := versionOf(t, h.write().Value); v != c.record {
			t.Errorf("over a release of protocol %d, members up to %d: a takeover wrote protocol %d", c.record, c.members, v)
		}
	}
}

// Over an absent key, a takeover writes the highest version it speaks
// that every member names.
func TestATakeoverOfAnAbsentKeyWritesWhatEveryMemberSpeaks(t *testing.T) {
	for _, c := range []struct{ hi, members, want int }{
		{wire.Protocol + 1, wire.Protocol + 1, wire.Protocol + 1},
		{wire.Protocol + 1, wire.Protocol, wire.Protocol},
		{wire.Protocol + 1, 0, wire.Protocol}, // members unknown
		{wire.Protocol, wire.Protocol + 1, wire.Protocol},
	} {
		p := params("a")
		p.ProtocolHi = c.hi
		h := newHarness(t, p)
		b := bucket(5)
		b.MembersSpeak = c.members
		h.open(b)
		h.at(ttl).do(Tick{})
		if v := versionOf(t, h.write().Value); v != c.want {
			t.Errorf("speaking up to %d, members up to %d: a Create wrote protocol %d, want %d", c.hi, c.members, v, c.want)
		}
	}
}

// What every member speaks, read longer than a TTL before a takeover over
// an absent key (a pause, say), is read again first: the version written
// is the members' now, both ways.
func TestATakeoverAfterAPauseReadsTheMembersAgain(t *testing.T) {
	for _, c := range []struct{ before, now int }{
		{wire.Protocol, wire.Protocol + 1}, {wire.Protocol + 1, wire.Protocol},
	} {
		p := params("a")
		p.ProtocolHi = wire.Protocol + 1
		h := newHarness(t, p)
		b := bucket(5)
		b.MembersSpeak = c.before
		h.open(b)
		out := h.at(3 * ttl).do(Tick{}) // woken a TTL after the wait ended
		var confirm Confirm
		for _, a := range out {
			switch r := a.(type) {
			case Write:
				t.Fatalf("members read up to %d, %v before: a takeover without reading them again", c.before, 3*ttl)
			case Confirm:
				confirm = r
			}
		}
		if confirm.ID == 0 {
			t.Fatalf("no Confirm before the takeover: %s", h.kinds())
		}
		b.MembersSpeak = c.now
		h.do(ConfirmResult{ID: confirm.ID, Bucket: b})
		if v := versionOf(t, h.write().Value); v != c.now {
			t.Errorf("members up to %d before the pause, %d now: a Create wrote protocol %d", c.before, c.now, v)
		}
	}
}

// The switch: a leader at protocol N renews at N+1 only after a Confirm
// finds every member speaking it; the epoch does not change, and the
// version never goes back.
func TestTheSwitchWaitsUntilEveryMemberSpeaksTheNextVersion(t *testing.T) {
	p := params("a")
	p.ProtocolHi = wire.Protocol + 1
	h := newHarness(t, p)
	h.open(bucket(5), put(5, record("", base+3, "")))
	w := h.write()
	h.do(WriteResult{ID: w.ID, Rev: 7})
	epoch := h.become().Epoch
	rev, next := uint64(7), h.armed()
	members, confirmed, confirms := 0, 0, 0 // what Confirms answer; the members of the last one answered; Confirms sent
	var renewals []int                      // the version of each renewal sent after a Confirm
	// answer answers every request in out at once, and notes the next
	// wake.
	var answer func(out []Action)
	answer = func(out []Action) {
		for _, a := range out {
			switch r := a.(type) {
			case Arm:
				next = r.At
			case Confirm:
				confirms++
				b := bucket(rev)
				b.MembersSpeak = members
				confirmed = members
				answer(h.do(ConfirmResult{ID: r.ID, Bucket: b}))
			case Write:
				if l, _ := wire.DecodeLease(r.Value, 0); l.Epoch != epoch {
					t.Fatalf("a renewal at epoch %d, the tenure's is %d", l.Epoch, epoch)
				} else if confirmed == members {
					renewals = append(renewals, l.Version)
				}
				rev++
				answer(h.do(WriteResult{ID: r.ID, Rev: rev}))
			}
		}
	}
	for _, step := range []struct{ members, want int }{
		{wire.Protocol, wire.Protocol}, {wire.Protocol + 1, wire.Protocol + 1}, {wire.Protocol, wire.Protocol + 1},
	} {
		members, renewals = step.members, nil
		atHi := step.want == p.ProtocolHi && step.members < step.want
		if atHi {
			confirmed = members // at its highest version the leader Confirms no more: every renewal counts
		}
		before := confirms
		for i := 0; len(renewals) < 2; i++ {
			if i > 100 {
				t.Fatalf("members speaking up to %d: no renewal after a Confirm in 100 wakes", step.members)
			}
			answer(h.at(next.Sub(t0)).do(Tick{}))
		}
		if atHi && confirms != before {
			t.Errorf("a leader at protocol %d, the highest it speaks, sent %d Confirms: the switch needs none", step.want, confirms-before)
		}
		if renewals[len(renewals)-1] != step.want {
			t.Errorf("members speaking up to %d: renewed at protocol %v, want %d", step.members, renewals, step.want)
		}
	}
}

// A leader's Confirm that failed is asked again within a renewal period,
// not a TTL later: the switch rides on it (P16). The million's seed
// 747289 ended with its cluster on the old version after two failed.
func TestALeaderAsksAgainAConfirmThatFailed(t *testing.T) {
	p := params("a")
	p.ProtocolHi = wire.Protocol + 1
	h := newHarness(t, p)
	h.open(bucket(5), put(5, record("", base+3, "")))
	w := h.write()
	h.do(WriteResult{ID: w.ID, Rev: 7})
	h.become()
	rev, next := uint64(7), h.armed()
	var confirms []time.Time // when each Confirm was sent; the first two fail
	var answer func(out []Action)
	answer = func(out []Action) { // the wake armed after a request's answer is the one that counts
		for _, a := range out {
			if r, ok := a.(Arm); ok {
				next = r.At
			}
		}
		for _, a := range out {
			switch r := a.(type) {
			case Confirm:
				confirms = append(confirms, h.now)
				if len(confirms) <= 2 {
					answer(h.do(ConfirmResult{ID: r.ID, Err: errors.New("timeout"), Class: Transient}))
				} else {
					answer(h.do(ConfirmResult{ID: r.ID, Bucket: bucket(rev)}))
				}
			case Write:
				rev++
				answer(h.do(WriteResult{ID: r.ID, Rev: rev}))
			}
		}
	}
	for i := 0; len(confirms) < 3; i++ {
		if i > 100 {
			t.Fatalf("%d Confirms in 100 wakes", len(confirms))
		}
		answer(h.at(next.Sub(t0)).do(Tick{}))
	}
	for i := 1; i < 3; i++ {
		if gap := confirms[i].Sub(confirms[i-1]); gap > p.RenewInterval {
			t.Errorf("Confirm %d failed; the next came %v later, past a renewal period (%v)", i, gap, p.RenewInterval)
		}
	}
}
