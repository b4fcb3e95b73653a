package election

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// t0 is every test's start on the node's clock.
var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

const ttl = 2 * time.Second

func params(id string) Params {
	return Params{NodeID: id, Instance: id + "-i", LeaseTTL: ttl, RenewInterval: 500 * time.Millisecond,
		SafetyMargin: ttl / 10, RequestTimeout: 300 * time.Millisecond, DrainTimeout: ttl, Cooldown: ttl}
}

// bucket is an incarnation created at t0 - 1 h, with this test's TTL, as
// a bucket moved from protocol 2 is: its revisions from 1, its epochs
// above an epoch_base (design §5.9), so that a test's revisions are its
// indices.
func bucket(lastSeq uint64) Incarnation {
	return Incarnation{Created: t0.Add(-time.Hour), EpochBase: 1_000_000, Protocol: wire.Protocol, LeaseTTL: ttl, MaxTTL: ttl, LastSeq: lastSeq, Age: time.Hour}
}

// harness feeds one machine and remembers its last request.
type harness struct {
	t   *testing.T
	m   *Machine
	now time.Time
	out []Action
	all []Action // every action since the start
	req Action   // the request last emitted
}

func newHarness(t *testing.T, p Params) *harness {
	t.Helper()
	return &harness{t: t, m: New(p, 1), now: t0}
}

// at moves the clock to t0 + d.
func (h *harness) at(d time.Duration) *harness { h.now = t0.Add(d); return h }

func (h *harness) do(ev Event) []Action {
	h.t.Helper()
	h.out = h.m.Handle(h.now, ev)
	h.all = append(h.all, h.out...)
	for _, a := range h.out {
		switch a.(type) {
		case Write, Confirm, Watch:
			h.req = a
		}
	}
	return h.out
}

// reqID is the ID of the request last emitted.
func (h *harness) reqID() uint64 {
	switch r := h.req.(type) {
	case Write:
		return r.ID
	case Confirm:
		return r.ID
	case Watch:
		return r.ID
	}
	h.t.Fatalf("no request out")
	return 0
}

// open runs Start, the opening Confirm, the watch up to Synced with the
// given entries, and the Confirm after it an unknown value or an absent
// key needs (P4).
func (h *harness) open(b Incarnation, entries ...KVEntry) {
	h.t.Helper()
	h.do(Start{})
	h.want("Confirm")
	h.do(ConfirmResult{ID: h.reqID(), Bucket: b})
	h.want("Watch")
	h.do(WatchStarted{ID: h.reqID()})
	for _, e := range entries {
		h.do(Entry{KV: e})
	}
	h.do(Synced{})
	if _, ok := h.req.(Confirm); ok && strings.Contains(h.kinds(), "Confirm") {
		h.do(ConfirmResult{ID: h.reqID(), Bucket: b}) // an unknown value's ceiling, an absent key's last sequence
	}
}

// want fails unless the last actions include one of each named kind.
func (h *harness) want(kinds ...string) {
	h.t.Helper()
	got := h.kinds()
	for _, k := range kinds {
		if !strings.Contains(" "+got+" ", " "+k+" ") {
			h.t.Fatalf("at +%v: want %s among [%s]", h.now.Sub(t0), k, got)
		}
	}
}

// none fails if the last actions include any of the named kinds.
func (h *harness) none(kinds ...string) {
	h.t.Helper()
	got := h.kinds()
	for _, k := range kinds {
		if strings.Contains(" "+got+" ", " "+k+" ") {
			h.t.Fatalf("at +%v: want no %s among [%s]", h.now.Sub(t0), k, got)
		}
	}
}

func (h *harness) kinds() string {
	var s []string
	for _, a := range h.out {
		s = append(s, strings.TrimPrefix(fmt.Sprintf("%T", a), "election."))
	}
	return strings.Join(s, " ")
}

// armed is the time of the last Arm, or zero.
func (h *harness) armed() time.Time {
	for i := len(h.out) - 1; i >= 0; i-- {
		if a, ok := h.out[i].(Arm); ok {
			return a.At
		}
	}
	return time.Time{}
}

func (h *harness) write() Write {
	h.t.Helper()
	w, ok := h.req.(Write)
	if !ok {
		h.t.Fatalf("want a Write out, have %T", h.req)
	}
	return w
}

// finished is the Finished among the last actions.
func (h *harness) finished() Finished {
	h.t.Helper()
	for _, a := range h.out {
		if f, ok := a.(Finished); ok {
			return f
		}
	}
	h.t.Fatalf("no Finished among [%s]", h.kinds())
	return Finished{}
}

func (h *harness) become() Become {
	h.t.Helper()
	for _, a := range h.out {
		if b, ok := a.(Become); ok {
			return b
		}
	}
	h.t.Fatalf("no Become among [%s]", h.kinds())
	return Become{}
}

// record encodes a record of this protocol.
func record(node string, epoch int64, next string) []byte {
	return wire.Lease{NodeID: node, Epoch: epoch, TTLMillis: ttl.Milliseconds(), Next: next, Instance: node + "-i", ExpiresAt: t0, AcquiredAt: t0}.Encode()
}

// judge applies P1 as the machine does in b, the range checked.
func judge(e KVEntry, b Incarnation) decoded { return judgeRange(e, b, true, wire.ProtocolHi) }

func put(rev uint64, v []byte) KVEntry { return KVEntry{Rev: rev, Op: Put, Value: v} }
