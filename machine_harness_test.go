package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// The table tests of machine.go: each row is a sequence of events, at the
// node's own now, with the actions expected after each, written as short
// strings (see summarize).

// mBase is the origin of the node's clock in the table tests.
var mBase = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func machineTestConfig(id string) Config {
	c := Config{ClusterID: "t", NodeID: id, LeaseTTL: time.Second, RenewInterval: 250 * time.Millisecond,
		SafetyMargin: 100 * time.Millisecond, RequestTimeout: 200 * time.Millisecond}.withDefaults()
	return c
}

// mStep is one event at ms after the origin, and the actions expected.
// An evResult without id answers the request out. want nil skips the check.
type mStep struct {
	ms   int
	ev   mEvent
	want []string
}

type mCase struct {
	name   string
	cfg    func(*Config)              // optional
	bucket bucketFacts                // optional
	setup  func(*machine)             // optional
	check  func(*testing.T, *machine) // optional, after the last step
	steps  []mStep
}

func runMachineCase(t *testing.T, c mCase) {
	t.Helper()
	cfg := machineTestConfig("a")
	if c.cfg != nil {
		c.cfg(&cfg)
	}
	m := newMachine(cfg, true, c.bucket, 1)
	m.instance = cfg.NodeID
	if c.setup != nil {
		c.setup(m)
	}
	for i, s := range c.steps {
		now := mBase.Add(time.Duration(s.ms) * time.Millisecond)
		if rb, ok := s.ev.(readBacks); ok {
			runReadBacks(m, now, rb)
			continue
		}
		ev := s.ev
		if r, ok := ev.(evResult); ok && r.id == 0 {
			if m.req == nil {
				t.Fatalf("step %d (%dms): a result, but no request is out", i, s.ms)
			}
			r.id = m.req.id
			ev = r
		}
		got := summarizeAll(now, m.handle(now, ev))
		if s.want != nil && !matchActions(got, s.want) {
			t.Fatalf("step %d (%dms, %T):\n got  %q\n want %q", i, s.ms, s.ev, got, s.want)
		}
	}
	if c.check != nil {
		c.check(t, m)
	}
}

// readBacks, as a step's event, ticks the machine every 10ms until until
// (ms after the origin) and answers every read it makes with entry: a
// stalled lease read back (rule 21) without a row per read. Its want is
// not checked.
type readBacks struct {
	until int
	entry evEntry
}

func (readBacks) machineEvent() {}

func runReadBacks(m *machine, from time.Time, rb readBacks) {
	for now := from; !now.After(mBase.Add(time.Duration(rb.until) * time.Millisecond)); now = now.Add(10 * time.Millisecond) {
		for _, a := range m.handle(now, evTick{}) {
			if g, ok := a.(actGet); ok {
				m.handle(now, evResult{id: g.id, entry: rb.entry.entry})
			}
		}
	}
}

func matchActions(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if want[i] != got[i] && !(strings.HasSuffix(want[i], "*") && strings.HasPrefix(got[i], strings.TrimSuffix(want[i], "*"))) {
			return false
		}
	}
	return true
}

func summarizeAll(now time.Time, acts []mAction) []string {
	out := make([]string, 0, len(acts))
	for _, a := range acts {
		if _, ok := a.(actLog); ok {
			continue // log lines are not decisions
		}
		if r, ok := a.(actReply); ok && r.silent {
			continue // nobody is answered
		}
		out = append(out, summarize(now, a))
	}
	return out
}

// summarize writes an action as a short string: "arm +750ms", "become 3",
// "write acquire create epoch=1", "write renew rev=4 epoch=2", ...
func summarize(now time.Time, a mAction) string {
	switch a := a.(type) {
	case actArm:
		if a.at.IsZero() {
			return "arm -"
		}
		return fmt.Sprintf("arm +%v", a.at.Sub(now))
	case actWrite:
		return "write " + a.purpose.String() + " " + describeWrite(a)
	case actGet:
		return "get"
	case actHistory:
		return "history"
	case actIncarnation:
		return "incarnation"
	case actWatch:
		return "watch"
	case actUnwatch:
		return "unwatch"
	}
	return summarizeNode(a)
}

// summarizeNode writes the actions that are not requests of the store.
func summarizeNode(a mAction) string {
	switch a := a.(type) {
	case actBecome:
		return fmt.Sprintf("become %d", a.epoch)
	case actLose:
		return fmt.Sprintf("lose %d %s", a.epoch, sentinelName(a.cause))
	case actLeaderChange:
		if a.leader == "" {
			return "leader -"
		}
		return "leader " + a.leader
	case actAskToLead:
		return "ask " + a.holder
	case actCooldownKey:
		return "cooldown"
	case actReply:
		if a.control {
			if a.reply.OK {
				return fmt.Sprintf("control ok epoch=%d to=%s", a.reply.Epoch, a.reply.To)
			}
			return "control refused"
		}
		return fmt.Sprintf("reply %d %s", a.token, sentinelName(a.err))
	case actFail:
		return "fail " + sentinelName(a.err)
	case actFinished:
		return "finished"
	}
	return fmt.Sprintf("%T", a)
}

func describeWrite(a actWrite) string {
	where := fmt.Sprintf("rev=%d", a.rev)
	if a.create {
		where = "create"
	}
	l, err := decodeLease(a.value, 0)
	if err != nil {
		return where + " garbage"
	}
	s := fmt.Sprintf("%s epoch=%d", where, l.Epoch)
	if l.Floor {
		s += fmt.Sprintf(" floor ttl=%v", l.ttl())
	}
	if l.Next != "" {
		s += " next=" + l.Next
	}
	return s
}

func sentinelName(err error) string {
	for _, s := range []struct {
		name string
		err  error
	}{{"ErrLeaseExpired", ErrLeaseExpired}, {"ErrEpochMismatch", ErrEpochMismatch}, {"ErrNotLeader", ErrNotLeader},
		{"ErrEpochExhausted", ErrEpochExhausted}, {"ErrStopped", ErrStopped}, {"ErrBucketDeleted", ErrBucketDeleted},
		{"ErrPermissionDenied", ErrPermissionDenied}, {"ErrReleaseFailed", ErrReleaseFailed}, {"ErrDuplicateNodeID", ErrDuplicateNodeID}} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	if err == nil {
		return "ok"
	}
	return "other"
}

// Entries of the lease key, for the tables.

// A table's records name their writer's process by its node's name: the
// machine under test runs as instance "a" of node "a" (rule 48).
func held(rev uint64, node string, epoch int64, ttl time.Duration) evEntry {
	return evEntry{kvEntry{rev: rev, value: mustEncode(Lease{NodeID: node, Epoch: epoch, TTLMillis: ttl.Milliseconds(),
		AcquiredAt: mBase, ExpiresAt: mBase, Instance: node})}}
}

// heldElsewhere is node's record written by another process, which was
// given the same NodeID (rule 48).
func heldElsewhere(rev uint64, node string, epoch int64, ttl time.Duration) evEntry {
	return evEntry{kvEntry{rev: rev, value: mustEncode(Lease{NodeID: node, Epoch: epoch, TTLMillis: ttl.Milliseconds(),
		AcquiredAt: mBase, ExpiresAt: mBase, Instance: "other-process"})}}
}

func heldPri(rev uint64, node string, epoch int64, priority int) evEntry {
	return evEntry{kvEntry{rev: rev, value: mustEncode(Lease{NodeID: node, Epoch: epoch, TTLMillis: 1000, Priority: priority,
		AcquiredAt: mBase, ExpiresAt: mBase, Instance: node})}}
}

func released(rev uint64, epoch int64, next string) evEntry {
	return evEntry{kvEntry{rev: rev, value: mustEncode(Lease{Epoch: epoch, Next: next, AcquiredAt: mBase, ExpiresAt: mBase})}}
}

func floorRec(rev uint64, epoch int64, ttl time.Duration) evEntry {
	return evEntry{kvEntry{rev: rev, value: mustEncode(Lease{Epoch: epoch, Floor: true, TTLMillis: ttl.Milliseconds(),
		AcquiredAt: mBase, ExpiresAt: mBase})}}
}

func garbage(rev uint64) evEntry { return evEntry{kvEntry{rev: rev, value: []byte("not a lease")}} }

func marker(rev uint64) evEntry { return evEntry{kvEntry{rev: rev, op: opDelete}} }

// Results of requests, for the tables.

var (
	ok        = evResult{}
	transient = evResult{err: errors.New("timeout"), class: classTransient}
	conflict  = evResult{err: errors.New("wrong last sequence"), class: classConflict}
	// refusedInFlight: a replicated stream refused the check while a
	// state write checked on the lease was in flight (rule 19, rule 46).
	refusedInFlight = evResult{err: errors.New("wrong last sequence"), class: classConflict, inFlight: true}
	notFound        = evResult{notFound: true, err: errors.New("key not found")}
	permanentE      = evResult{err: ErrPermissionDenied, class: classPermanent}
	bucketGoneE     = evResult{err: fmt.Errorf("%w: stream not found", ErrBucketDeleted), class: classPermanent}
)

func wrote(rev uint64) evResult { return evResult{rev: rev} }

func got(e evEntry) evResult { return evResult{entry: e.entry} }

func hist(es ...evEntry) evResult {
	r := evResult{}
	for _, e := range es {
		r.history = append(r.history, e.entry)
	}
	return r
}

func incarnation(recreated bool, lastSeq uint64) evResult {
	return evResult{recreated: recreated, lastSeq: lastSeq}
}

var _ = math.MaxInt64

type contextT = context.Context
