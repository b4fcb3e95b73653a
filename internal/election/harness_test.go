package election

import (
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

func machineTestConfig(id string) Params {
	return withDefaults(Params{NodeID: id, LeaseTTL: time.Second, RenewInterval: 250 * time.Millisecond,
		SafetyMargin: 100 * time.Millisecond, RequestTimeout: 200 * time.Millisecond})
}

// withDefaults applies cluster.Config's defaults to what p leaves zero
// (SafetyMargin aside: the tests set it).
func withDefaults(p Params) Params {
	if p.DrainTimeout == 0 {
		p.DrainTimeout = p.LeaseTTL
	}
	if p.Cooldown == 0 {
		p.Cooldown = p.LeaseTTL
	}
	if p.ReadinessThreshold == 0 {
		p.ReadinessThreshold = 3
	}
	return p
}

// mStep is one event at ms after the origin, and the actions expected.
// An Result without id answers the request out. want nil skips the check.
type mStep struct {
	ms   int
	ev   Event
	want []string
}

type mCase struct {
	name   string
	cfg    func(*Params)              // optional
	bucket BucketFacts                // optional
	setup  func(*Machine)             // optional
	check  func(*testing.T, *Machine) // optional, after the last step
	steps  []mStep
}

func runMachineCase(t *testing.T, c mCase) {
	t.Helper()
	cfg := machineTestConfig("a")
	if c.cfg != nil {
		c.cfg(&cfg)
	}
	m := New(cfg, c.bucket, 1)
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
		if r, ok := ev.(Result); ok && r.ID == 0 {
			if m.req == nil {
				t.Fatalf("step %d (%dms): a result, but no request is out", i, s.ms)
			}
			r.ID = m.req.id
			ev = r
		}
		got := summarizeAll(now, m.Handle(now, ev))
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
	entry Entry
}

func (readBacks) machineEvent() {}

func runReadBacks(m *Machine, from time.Time, rb readBacks) {
	for now := from; !now.After(mBase.Add(time.Duration(rb.until) * time.Millisecond)); now = now.Add(10 * time.Millisecond) {
		for _, a := range m.Handle(now, Tick{}) {
			if g, ok := a.(Get); ok {
				m.Handle(now, Result{ID: g.ID, Entry: rb.entry.KV})
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

func summarizeAll(now time.Time, acts []Action) []string {
	out := make([]string, 0, len(acts))
	for _, a := range acts {
		if _, ok := a.(Log); ok {
			continue // log lines are not decisions
		}
		if r, ok := a.(Reply); ok && r.Silent {
			continue // nobody is answered
		}
		out = append(out, summarize(now, a))
	}
	return out
}

// summarize writes an action as a short string: "arm +750ms", "become 3",
// "write acquire create epoch=1", "write renew rev=4 epoch=2", ...
func summarize(now time.Time, a Action) string {
	switch a := a.(type) {
	case Arm:
		if a.At.IsZero() {
			return "arm -"
		}
		return fmt.Sprintf("arm +%v", a.At.Sub(now))
	case Write:
		return "write " + a.Purpose.String() + " " + describeWrite(a)
	case Get:
		return "get"
	case History:
		return "history"
	case Incarnation:
		return "incarnation"
	case Watch:
		return "watch"
	case Unwatch:
		return "unwatch"
	}
	return summarizeNode(a)
}

// summarizeNode writes the actions that are not requests of the store.
func summarizeNode(a Action) string {
	switch a := a.(type) {
	case Become:
		return fmt.Sprintf("become %d", a.Epoch)
	case Lose:
		return fmt.Sprintf("lose %d %s", a.Epoch, sentinelName(a.Cause))
	case LeaderChange:
		if a.Leader == "" {
			return "leader -"
		}
		return "leader " + a.Leader
	case AskToLead:
		return "ask " + a.Holder
	case CooldownKey:
		return "cooldown"
	case Reply:
		if a.Control {
			if a.Answer.OK {
				return fmt.Sprintf("control ok epoch=%d to=%s", a.Answer.Epoch, a.Answer.To)
			}
			return "control refused"
		}
		return fmt.Sprintf("reply %d %s", a.Token, sentinelName(a.Err))
	case Fail:
		return "fail " + sentinelName(a.Err)
	case Finished:
		return "finished"
	}
	return fmt.Sprintf("%T", a)
}

func describeWrite(a Write) string {
	where := fmt.Sprintf("rev=%d", a.Rev)
	if a.Create {
		where = "create"
	}
	l, err := DecodeLease(a.Value, 0)
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
		{"ErrPermissionDenied", errPermissionDenied}, {"ErrReleaseFailed", ErrReleaseFailed}, {"ErrDuplicateNodeID", ErrDuplicateNodeID}} {
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
func held(rev uint64, node string, epoch int64, ttl time.Duration) Entry {
	return Entry{KVEntry{Rev: rev, Value: mustEncode(Lease{NodeID: node, Epoch: epoch, TTLMillis: ttl.Milliseconds(),
		AcquiredAt: mBase, ExpiresAt: mBase, Instance: node})}}
}

// heldElsewhere is node's record written by another process, which was
// given the same NodeID (rule 48).
func heldElsewhere(rev uint64, node string, epoch int64, ttl time.Duration) Entry {
	return Entry{KVEntry{Rev: rev, Value: mustEncode(Lease{NodeID: node, Epoch: epoch, TTLMillis: ttl.Milliseconds(),
		AcquiredAt: mBase, ExpiresAt: mBase, Instance: "other-process"})}}
}

func heldPri(rev uint64, node string, epoch int64, priority int) Entry {
	return Entry{KVEntry{Rev: rev, Value: mustEncode(Lease{NodeID: node, Epoch: epoch, TTLMillis: 1000, Priority: priority,
		AcquiredAt: mBase, ExpiresAt: mBase, Instance: node})}}
}

func released(rev uint64, epoch int64, next string) Entry {
	return Entry{KVEntry{Rev: rev, Value: mustEncode(Lease{Epoch: epoch, Next: next, AcquiredAt: mBase, ExpiresAt: mBase})}}
}

func floorRec(rev uint64, epoch int64, ttl time.Duration) Entry {
	return Entry{KVEntry{Rev: rev, Value: mustEncode(Lease{Epoch: epoch, Floor: true, TTLMillis: ttl.Milliseconds(),
		AcquiredAt: mBase, ExpiresAt: mBase})}}
}

func garbage(rev uint64) Entry { return Entry{KVEntry{Rev: rev, Value: []byte("not a lease")}} }

func marker(rev uint64) Entry { return Entry{KVEntry{Rev: rev, Op: Delete}} }

// Results of requests, for the tables.

var (
	ok        = Result{}
	transient = Result{Err: errors.New("timeout"), Class: Transient}
	conflict  = Result{Err: errors.New("wrong last sequence"), Class: Conflict}
	// refusedInFlight: a replicated stream refused the check while a
	// state write checked on the lease was in flight (rule 19, rule 46).
	refusedInFlight = Result{Err: errors.New("wrong last sequence"), Class: Conflict, InFlight: true}
	notFound        = Result{NotFound: true, Err: errors.New("key not found")}
	permanentE      = Result{Err: errPermissionDenied, Class: Permanent}
	bucketGoneE     = Result{Err: fmt.Errorf("%w: stream not found", ErrBucketDeleted), Class: Permanent}
)

func wrote(rev uint64) Result { return Result{Rev: rev} }

func got(e Entry) Result { return Result{Entry: e.KV} }

func hist(es ...Entry) Result {
	r := Result{}
	for _, e := range es {
		r.History = append(r.History, e.KV)
	}
	return r
}

func incarnation(recreated bool, lastSeq uint64) Result {
	return Result{Recreated: recreated, LastSeq: lastSeq}
}

var _ = math.MaxInt64

// errPermissionDenied stands for cluster.ErrPermissionDenied, a permanent
// error the driver reports and the machine only passes on.
var errPermissionDenied = errors.New("cluster: permission denied")
