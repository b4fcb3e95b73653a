package election

import (
	"math"
	"testing"
	"time"
)

// leadPrefix makes node a the leader at epoch 1 in a bucket made long ago
// with nothing in it: deadline at 901ms, renewal due at 251ms.
var leadPrefix = []mStep{
	{0, Synced{}, []string{"incarnation", "arm -"}},
	{1, incarnation(false, 0), []string{"history", "arm -"}},
	{1, hist(), []string{"write acquire create epoch=1", "arm -"}},
	{2, wrote(1), []string{"incarnation", "arm -"}},
	{2, incarnation(false, 1), []string{"become 1", "leader a", "arm +249ms"}},
	{3, held(1, "a", 1, time.Second), []string{"arm +248ms"}},
}

var oldEmptyBucket = BucketFacts{AgeAtOpen: 10 * time.Second}

func withPrefix(prefix []mStep, steps ...mStep) []mStep {
	return append(append([]mStep{}, prefix...), steps...)
}

// stillGone is the deleted-bucket wait from from until to (ms): every
// RenewInterval the node asks for the bucket and finds it still deleted.
func stillGone(from, to int) []mStep {
	var steps []mStep
	for ms := from; ms < to; ms += 251 {
		steps = append(steps,
			mStep{ms, Tick{}, []string{"incarnation", "arm -"}},
			mStep{ms + 1, bucketGoneE, []string{"arm +250ms"}})
	}
	return steps
}

// waitOutB has node a, following b's record (followB), read it back from
// TTL/2 every min(RenewInterval, TTL/4) and find it expired at 1000 ms on
// its clock: it asks the bucket's identity before taking it over.
var waitOutB = withPrefix(followB,
	mStep{500, Tick{}, []string{"get", "arm -"}},
	mStep{502, got(held(5, "b", 3, time.Second)), []string{"arm +248ms"}},
	mStep{750, Tick{}, []string{"get", "arm -"}},
	mStep{751, got(held(5, "b", 3, time.Second)), []string{"arm +249ms"}},
	mStep{1000, Tick{}, []string{"get", "arm -"}},
	mStep{1000, got(held(5, "b", 3, time.Second)), []string{"leader -", "incarnation", "arm -"}},
)

// followB has node a follow b's record (epoch 3, TTL 1s) at revision 5.
var followB = []mStep{
	{0, held(5, "b", 3, time.Second), []string{"leader b", "arm -"}},
	{0, Synced{}, []string{"arm +500ms"}},
}

func TestMachineProtocol(t *testing.T) {
	for _, c := range []mCase{
		{name: "new empty bucket waits LeaseTTL less its age, then creates at epoch 1 (rule 16)",
			bucket: BucketFacts{AgeAtOpen: 300 * time.Millisecond},
			steps: []mStep{
				{0, Synced{}, []string{"arm +700ms"}},
				{699, Tick{}, []string{"arm +1ms"}},
				{700, Tick{}, []string{"incarnation", "arm -"}},
				{700, incarnation(false, 0), []string{"history", "arm -"}},
				{705, hist(), []string{"write acquire create epoch=1", "arm -"}},
				{710, wrote(1), []string{"incarnation", "arm -"}},
				{710, incarnation(false, 1), []string{"become 1", "leader a", "arm +245ms"}},
				{955, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
				{960, wrote(2), []string{"arm +245ms"}}, // deadline 955+900
			}},
		{name: "absent key in a used bucket: a node with no memory writes a floor at once (rule 55), waits it out, and leads above the stream's last sequence (§5.3)",
			bucket: BucketFacts{LastSeqAtOpen: 10},
			steps: []mStep{
				{0, Synced{}, []string{"write seed create epoch=1 floor ttl=1s", "arm -"}},
				{1, wrote(11), nil},
				{2, floorRec(11, 1, time.Second), nil},
				{10, readBacks{990, floorRec(11, 1, time.Second)}, nil},
				{1001, Tick{}, []string{"incarnation", "arm -"}},
				{1001, incarnation(false, 11), []string{"history", "arm -"}},
				{1002, hist(floorRec(11, 1, time.Second)), []string{"write acquire rev=11 epoch=11", "arm -"}},
			}},
		{name: "held record: read back from TTL/2 every min(RenewInterval, TTL/4), take over after W on this clock, revision floor for a first sight (§3.2, §2.4, rule 21)",
			bucket: BucketFacts{LastSeqAtOpen: 5},
			steps: withPrefix(waitOutB,
				mStep{1000, incarnation(false, 5), []string{"history", "arm -"}},
				mStep{1001, hist(held(5, "b", 3, time.Second)), []string{"write acquire rev=5 epoch=5", "arm -"}},
				mStep{1002, wrote(6), []string{"incarnation", "arm -"}},
				mStep{1002, incarnation(false, 6), []string{"become 5", "leader a", "arm +249ms"}},
			)},
		{name: "a renewal resets the follower's count",
			steps: withPrefix(followB,
				mStep{250, held(6, "b", 3, time.Second), []string{"arm +500ms"}},
				mStep{750, Tick{}, []string{"get", "arm -"}},
				mStep{751, got(held(6, "b", 3, time.Second)), []string{"arm +249ms"}},
			)},
		{name: "a reconnect restarts the expiry count (§3.2)",
			steps: withPrefix(followB,
				mStep{400, Conn{Connected: true, Reconnects: 1}, []string{"incarnation", "arm -"}}, // rule 53
				mStep{401, incarnation(false, 5), []string{"arm +499ms"}},
			)},
		{name: "a disconnected follower never declares expiry; a read-back due while cut off looks again a RenewInterval later (a247aca)",
			steps: withPrefix(followB,
				mStep{100, Conn{Connected: false}, []string{"arm +400ms"}},
				mStep{500, Tick{}, []string{"arm +250ms"}},
				mStep{750, Tick{}, []string{"arm +250ms"}},
				mStep{1000, Tick{}, []string{"arm +250ms"}},
				mStep{1250, Tick{}, []string{"arm +250ms"}},
			)},
		{name: "the history shows a longer TTL: wait it out (rule 17)",
			steps: withPrefix(followB,
				mStep{500, Tick{}, []string{"get", "arm -"}},
				mStep{501, got(held(5, "b", 3, time.Second)), []string{"arm +249ms"}},
				mStep{750, Tick{}, []string{"get", "arm -"}},
				mStep{751, got(held(5, "b", 3, time.Second)), []string{"arm +249ms"}},
				mStep{1000, Tick{}, []string{"get", "arm -"}},
				mStep{1000, got(held(5, "b", 3, time.Second)), []string{"leader -", "incarnation", "arm -"}},
				mStep{1000, incarnation(false, 5), []string{"history", "arm -"}},
				mStep{1001, hist(held(4, "b", 3, 5*time.Second), held(5, "b", 3, time.Second)), []string{"leader b", "arm +249ms"}},
				mStep{1010, readBacks{4990, held(5, "b", 3, time.Second)}, nil},
				mStep{5000, Tick{}, []string{"get", "arm -"}},
				mStep{5000, got(held(5, "b", 3, time.Second)), []string{"leader -", "incarnation", "arm -"}},
				mStep{5000, incarnation(false, 5), []string{"history", "arm -"}},
				mStep{5001, hist(), []string{"write acquire rev=5 epoch=5", "arm -"}},
			)},
		{name: "a handed-back release is taken at once (§5.5)",
			steps: withPrefix(followB,
				mStep{100, released(6, 3, ""), []string{"write acquire rev=6 epoch=4", "leader -", "arm -"}},
			)},
		{name: "a release out of the blue is waited out (rule 13)",
			steps: withPrefix(followB,
				// Nothing renews it: read back within MinLeaseTTL (rule 26).
				mStep{100, released(6, 9, ""), []string{"leader -", "arm +250ms"}},
				mStep{350, Tick{}, []string{"get", "arm -"}},
				mStep{351, got(released(6, 9, "")), []string{"arm +124ms"}},
				mStep{360, readBacks{1090, released(6, 9, "")}, nil},
				mStep{1100, Tick{}, []string{"incarnation", "arm -"}},
				mStep{1100, incarnation(false, 6), []string{"history", "arm -"}},
				mStep{1101, hist(), []string{"write acquire rev=6 epoch=10", "arm -"}},
			)},
		{name: "a release as the first entry seen is taken, above its revision, if the history shows it handing back (rule 27)",
			bucket: BucketFacts{LastSeqAtOpen: 9},
			steps: []mStep{
				{0, released(9, 4, ""), []string{"arm -"}},
				{0, Synced{}, []string{"history", "arm -"}},
				{1, hist(held(8, "b", 4, 3*time.Second), released(9, 4, "")), []string{"write acquire rev=9 epoch=9", "arm -"}},
			}},
		{name: "TestSafety13ForgedReleaseSeenFirst: a release seen first over another epoch is waited out, the longest TTL (rule 27)",
			bucket: BucketFacts{LastSeqAtOpen: 9},
			steps: []mStep{
				{0, released(9, 2, ""), []string{"arm -"}},
				{0, Synced{}, []string{"history", "arm -"}},
				{1, hist(held(8, "b", 4, 3*time.Second), released(9, 2, "")), []string{"arm +249ms"}},
			},
			check: func(t *testing.T, m *Machine) {
				if got := m.holdUntil().Sub(mBase); got != time.Second || m.lv.cur.handedBack {
					t.Errorf("waits until %v (handed back %v), want 1s and not handed back", got, m.lv.cur.handedBack)
				}
			}},
		{name: "a release seen first after a marker, or in a bucket that keeps one revision, is waited out (rule 27)",
			bucket: BucketFacts{LastSeqAtOpen: 9},
			steps: []mStep{
				{0, released(9, 4, ""), []string{"arm -"}},
				{0, Synced{}, []string{"history", "arm -"}},
				{1, hist(marker(8), released(9, 4, "")), []string{"arm +249ms"}},
			}},
		{name: "a release seen first is not read back while cut off, and waited out meanwhile (rule 27)",
			bucket: BucketFacts{LastSeqAtOpen: 9},
			steps: []mStep{
				{0, Conn{Connected: false}, []string{"arm -"}},
				{0, released(9, 4, ""), []string{"arm -"}},
				{0, Synced{}, []string{"arm +250ms"}},
				{100, Conn{Connected: true}, []string{"history", "arm -"}},
			}},
		{name: "handover window: only the named node campaigns for RenewInterval (§4.5)",
			steps: withPrefix(followB,
				mStep{100, released(6, 3, "c"), []string{"leader -", "arm +250ms"}},
				mStep{350, Tick{}, []string{"write acquire rev=6 epoch=4", "arm -"}},
			)},
		{name: "the named successor ignores its cooldown (§4.5)",
			setup: func(m *Machine) { m.hand.cooldownUntil = mBase.Add(10 * time.Second) },
			steps: withPrefix(followB,
				mStep{100, released(6, 3, "a"), []string{"write acquire rev=6 epoch=4", "leader -", "arm -"}},
			)},
		{name: "cooldown keeps a node out of a free lease",
			setup: func(m *Machine) { m.hand.cooldownUntil = mBase.Add(2 * time.Second) },
			steps: withPrefix(followB,
				mStep{100, released(6, 3, ""), []string{"leader -", "arm +1.9s"}},
				// Seen a while ago: the same bucket? (rule 21)
				mStep{2000, Tick{}, []string{"incarnation", "arm -"}},
				mStep{2000, incarnation(false, 6), []string{"write acquire rev=6 epoch=4", "arm -"}},
			)},
		{name: "no campaign before the first readiness check passes (§4.7)",
			cfg:    func(c *Params) { c.ReadinessCheck = true },
			bucket: BucketFacts{LastSeqAtOpen: 9},
			steps: []mStep{
				{0, released(9, 4, ""), []string{"arm -"}},
				{0, Synced{}, []string{"history", "arm -"}},
				{1, hist(held(8, "b", 4, time.Second), released(9, 4, "")), []string{"arm -"}},
				{10, Health{}, []string{"write acquire rev=9 epoch=9", "arm -"}},
			}},
		{name: "lost race: wait for a newer revision, read the key when the loser's CAS says so (§4.1)",
			steps: withPrefix(followB,
				mStep{500, readBacks{990, held(5, "b", 3, time.Second)}, nil},
				mStep{1000, Tick{}, []string{"get", "arm -"}},
				mStep{1000, got(held(5, "b", 3, time.Second)), []string{"leader -", "incarnation", "arm -"}},
				mStep{1000, incarnation(false, 5), []string{"history", "arm -"}},
				mStep{1001, hist(), []string{"write acquire rev=5 epoch=5", "arm -"}},
				mStep{1002, conflict, []string{"get", "arm -"}},
				mStep{1003, got(held(6, "c", 4, time.Second)), []string{"leader c", "arm +500ms"}},
			)},
		{name: "ambiguous acquire: the node's own record on the watch starts the tenure from its send time (rule 12)",
			bucket: oldEmptyBucket,
			steps: withPrefix(createSent,
				mStep{201, transient, []string{"arm *"}},
				// The bucket's identity once it landed (rule 38), then lead.
				mStep{210, held(1, "a", 1, time.Second), []string{"incarnation", "arm -"}},
				mStep{212, incarnation(false, 1), []string{"become 1", "leader a", "arm +39ms"}},
			)},
		{name: "rule 40 (simulator seed 17919): an acquire out when the node follows a bucket created again leads nothing if it lands there",
			bucket: oldEmptyBucket,
			steps: withPrefix(createSent,
				mStep{180, BucketCreated{}, []string{"arm -"}},
				mStep{201, transient, []string{"incarnation", "arm -"}},
				mStep{205, incarnation(true, 0), []string{"watch", "arm -"}},
				mStep{206, ok, []string{"arm -"}},
				mStep{207, Synced{}, []string{"arm +*"}},
				// The Create, still in flight, lands in the new bucket: a
				// floor over it, not a tenure counted from its send.
				mStep{220, held(1, "a", 1, time.Second), []string{"arm +*"}}, // the backoff after the timeout
				mStep{240, Tick{}, []string{"write seed rev=1 epoch=1 floor ttl=1s", "arm -"}},
			)},
		{name: "ambiguous acquire that lands after its deadline is released at once (§4.1)",
			bucket: oldEmptyBucket,
			steps: withPrefix(createSent,
				mStep{201, transient, []string{"arm *"}},
				mStep{950, held(1, "a", 1, time.Second), []string{"write release-stale rev=1 epoch=1", "arm -"}},
				mStep{955, wrote(2), []string{"arm +495ms"}},
			)},
		{name: "renewal timeouts keep the last success; the deadline ends the tenure even with a request out (§3.3, §4.2)",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
				mStep{451, transient, []string{"arm *"}},
				mStep{480, Tick{}, []string{"write renew rev=1 epoch=1", "arm +421ms"}},
				mStep{901, Tick{}, []string{"lose 1 ErrLeaseExpired", "arm -"}},
				// The renewal landed late: too late, the tenure is over, and
				// the record it left is given back.
				mStep{910, wrote(2), []string{"leader -", "get", "arm -"}},
				mStep{915, got(held(2, "a", 1, time.Second)), []string{"write release-stale rev=2 epoch=1", "arm -"}},
			)},
		{name: "renewal conflict: the node's own late write is adopted and renewed at once (§4.2)",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
				mStep{260, conflict, []string{"get", "arm +641ms"}},
				mStep{262, got(held(3, "a", 1, time.Second)), []string{"write renew rev=3 epoch=1", "arm +639ms"}},
				mStep{263, wrote(4), []string{"arm +249ms"}},
			)},
		{name: "renewal conflict: someone else's record demotes at once with ErrEpochMismatch (§4.2)",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
				mStep{260, conflict, []string{"get", "arm +641ms"}},
				// Its record at revision 1 was learned more than
				// RenewInterval ago: the bucket's identity first (rule 39).
				mStep{262, got(held(3, "b", 2, time.Second)), []string{"lose 1 ErrEpochMismatch", "incarnation", "leader -", "arm -"}},
				mStep{263, incarnation(false, 3), []string{"write release-stale rev=1 epoch=1", "arm -"}},
			)},
		{name: "the watch shows a revision that is not ours: demote (§4.2, §5.5)",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{100, held(2, "b", 2, time.Second), []string{"lose 1 ErrEpochMismatch", "leader b", "arm +500ms"}},
			)},
		{name: "garbage under the leader demotes it, and the epoch is written back as a floor (§5.1, rule 20)",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{100, garbage(2), []string{"lose 1 ErrEpochMismatch", "write seed rev=2 epoch=1 floor ttl=1s", "leader -", "arm -"}},
				// The floor is what the key holds now: no second one over
				// the garbage; nothing renews it, read it back soon (rule 26).
				mStep{101, wrote(3), []string{"arm +250ms"}},
				mStep{102, floorRec(3, 1, time.Second), []string{"arm +249ms"}},
				mStep{351, readBacks{1091, floorRec(3, 1, time.Second)}, nil},
				mStep{1101, Tick{}, []string{"incarnation", "arm -"}},
				mStep{1101, incarnation(false, 3), []string{"history", "arm -"}},
				// Over a floor record: above its revision too (rule 31).
				mStep{1102, hist(held(1, "a", 1, time.Second), garbage(2), floorRec(3, 1, time.Second)), []string{"write acquire rev=3 epoch=3", "arm -"}},
			)},
		{name: "a floor below what the node knows is raised (§5.3)",
			steps: withPrefix(followB,
				mStep{100, floorRec(6, 2, time.Second), []string{"write seed rev=6 epoch=3 floor ttl=1s", "leader -", "arm -"}},
			)},
		{name: "compacted under the leader: demote, write the epoch back into the absent key (§5.3, rule 4)",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
				mStep{260, conflict, []string{"get", "arm +641ms"}},
				mStep{262, notFound, []string{"incarnation", "arm +639ms"}},
				mStep{264, incarnation(false, 3), []string{"lose 1 ErrEpochMismatch", "write seed create epoch=1 floor ttl=1s", "arm -"}},
			)},
		{name: "a key found absent where an entry was seen is a new observation (rule 4)",
			steps: withPrefix(followB,
				mStep{500, Tick{}, []string{"get", "arm -"}},
				mStep{501, notFound, []string{"incarnation", "arm -"}},
				mStep{502, incarnation(false, 9), []string{"write seed create epoch=3 floor ttl=1s", "leader -", "arm -"}},
			)},
		{name: "an older entry from a recreated bucket: follow the new bucket, watch and all; keep the epoch (§5.4, rule 37)",
			steps: withPrefix(followB,
				mStep{100, held(2, "c", 1, time.Second), []string{"incarnation", "arm -"}},
				mStep{105, incarnation(true, 2), []string{"watch", "arm -"}},
				mStep{106, ok, []string{"leader -", "arm -"}},
				mStep{107, held(2, "c", 1, time.Second), []string{"leader c", "arm -"}},
				// c's epoch 1 is below the 3 it remembers: a floor carries
				// the epoch into the new bucket (rule 43).
				mStep{107, Synced{}, []string{"write seed rev=2 epoch=3 floor ttl=1s", "arm -"}},
				mStep{108, wrote(3), []string{"leader -", "arm +250ms"}},
			)},
		{name: "an older entry from the same bucket is a stale read, dropped",
			steps: withPrefix(followB,
				mStep{100, held(4, "b", 3, time.Second), []string{"incarnation", "arm -"}},
				mStep{105, incarnation(false, 5), []string{"arm +395ms"}},
			)},
		{name: "the epoch never wraps: ErrEpochExhausted is permanent (rule 5)",
			steps: []mStep{
				{0, held(5, "b", math.MaxInt64, time.Second), []string{"leader b", "arm -"}},
				{0, Synced{}, []string{"arm +500ms"}},
				{500, readBacks{990, held(5, "b", math.MaxInt64, time.Second)}, nil},
				{1000, Tick{}, []string{"get", "arm -"}},
				{1000, got(held(5, "b", math.MaxInt64, time.Second)), []string{"leader -", "incarnation", "arm -"}},
				{1000, incarnation(false, 5), []string{"history", "arm -"}},
				{1001, hist(), []string{"fail ErrEpochExhausted", "finished"}},
				{2000, Tick{}, []string{}},
			}},
		{name: "a permanent error stops the node (§7.1)",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
				mStep{260, permanentE, []string{"fail ErrPermissionDenied", "lose 1 ErrPermissionDenied", "leader -", "finished"}},
			)},
	} {
		t.Run(c.name, func(t *testing.T) { runMachineCase(t, c) })
	}
}

func TestMachineStepDown(t *testing.T) {
	for _, c := range []mCase{
		{name: "StepDownTo drains: lose, renew until OnLoseLeadership returns, release naming the successor, cooldown (§4.4, §4.5)",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{10, StepDown{To: "b", Token: 7}, []string{"lose 1 ok", "leader -", "arm +241ms"}},
				mStep{20, LoseStarted{Epoch: 1}, []string{"arm +231ms"}},
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm -"}},
				mStep{252, wrote(2), []string{"arm +249ms"}},
				mStep{300, LoseDone{Epoch: 1}, []string{"write release rev=2 epoch=1 next=b", "arm -"}},
				// The release is not yet on the watch, but the key holds it:
				// nothing to give back (rule 42; before it, a CAS on its
				// held record that could only lose).
				mStep{305, wrote(3), []string{"cooldown", "reply 7 ok", "arm +1s"}},
				mStep{306, released(3, 1, "b"), []string{"arm +999ms"}},
			),
			check: func(t *testing.T, m *Machine) {
				if want := mBase.Add(1305 * time.Millisecond); !m.hand.cooldownUntil.Equal(want) {
					t.Errorf("cooldown until %v, want %v", m.hand.cooldownUntil.Sub(mBase), want.Sub(mBase))
				}
			}},
		{name: "DrainTimeout counts from when OnLoseLeadership began (rule 9)",
			bucket: oldEmptyBucket,
			cfg:    func(c *Params) { c.DrainTimeout = 100 * time.Millisecond },
			steps: withPrefix(leadPrefix,
				mStep{10, StepDown{Token: 1}, []string{"lose 1 ok", "leader -", "arm +241ms"}},
				mStep{200, LoseStarted{Epoch: 1}, []string{"arm +51ms"}},
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm -"}},
				mStep{252, wrote(2), []string{"arm +48ms"}},
				mStep{300, Tick{}, []string{"write release rev=2 epoch=1", "arm -"}},
			)},
		{name: "rule 46: a release refused while a state write checked on the lease is in flight is sent again; a lost one names ErrReleaseFailed",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{10, StepDown{To: "b", Token: 7}, []string{"lose 1 ok", "leader -", "arm +241ms"}},
				mStep{20, LoseStarted{Epoch: 1}, nil},
				mStep{30, LoseDone{Epoch: 1}, []string{"write release rev=1 epoch=1 next=b", "arm -"}},
				mStep{31, refusedInFlight, []string{"write release rev=1 epoch=1 next=b", "arm -"}},
				mStep{32, refusedInFlight, []string{"write release rev=1 epoch=1 next=b", "arm -"}},
				// The third refusal ends the StepDown with ErrReleaseFailed;
				// the node still holds its record on paper and gives it back
				// (§4.1).
				mStep{33, refusedInFlight, []string{"cooldown", "reply 7 ErrReleaseFailed", "write release-stale rev=1 epoch=1", "arm -"}},
			)},
		{name: "StepDown on a follower is refused",
			steps: withPrefix(followB, mStep{10, StepDown{Token: 2}, []string{"reply 2 ErrNotLeader", "arm +490ms"}})},
		{name: "Stop on the leader drains and releases without cooldown, then finishes (§4.4)",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{10, Stop{Token: 3}, []string{"lose 1 ok", "leader -", "arm +241ms"}},
				mStep{20, LoseStarted{Epoch: 1}, nil},
				mStep{30, LoseDone{Epoch: 1}, []string{"write release rev=1 epoch=1", "arm -"}},
				mStep{35, wrote(2), []string{"reply 3 ok", "finished"}},
			)},
		{name: "Stop after the deadline skips the drain",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
				mStep{901, Tick{}, []string{"lose 1 ErrLeaseExpired", "arm -"}},
				mStep{902, Stop{Token: 4}, []string{"arm -"}}, // kept: a request is out
				// The loop finishes what it is doing before it reads Stop:
				// the probe of its own record, and giving it back once the
				// bucket is known to be the same (its revision was learned
				// more than RenewInterval ago, rule 39).
				mStep{950, transient, []string{"leader -", "get", "arm -"}},
				mStep{951, got(held(1, "a", 1, time.Second)), []string{"incarnation", "arm -"}},
				mStep{952, incarnation(false, 1), []string{"write release-stale rev=1 epoch=1", "arm -"}},
				mStep{953, conflict, []string{"reply 4 ok", "finished"}},
			)},
		{name: "remote step-down: a follower is silent on the cluster subject, the leader checks epoch and obeys (§4.8)",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{5, Control{Generic: true, Data: []byte(`{"epoch":5}`), Received: mBase.Add(5 * time.Millisecond), Token: 9}, []string{"control refused", "arm +246ms"}},
				mStep{6, Control{Generic: true, Data: []byte(`{}`), Received: mBase, Token: 10}, []string{"arm +245ms"}}, // meant for a predecessor
				mStep{7, Control{Data: []byte(`{"to":"a"}`), Received: mBase.Add(7 * time.Millisecond), Token: 11}, []string{"control refused", "arm +244ms"}},
				mStep{8, Control{Data: []byte(`{"reason":"priority","priority":1}`), Received: mBase.Add(8 * time.Millisecond), Token: 12}, []string{"control refused", "arm +243ms"}},
				mStep{20, Control{Generic: true, Data: []byte(`{"to":"c","epoch":1}`), Received: mBase.Add(20 * time.Millisecond), Token: 13}, []string{"lose 1 ok", "leader -", "arm +231ms"}},
				mStep{30, LoseDone{Epoch: 1}, []string{"write release rev=1 epoch=1 next=c", "arm -"}},
				mStep{35, wrote(2), []string{"cooldown", "control ok epoch=1 to=c", "arm +1s"}},
			)},
		{name: "remote step-down on a follower: silent on the cluster subject, refused on its own",
			steps: withPrefix(followB,
				mStep{10, Control{Generic: true, Data: []byte(`{}`), Received: mBase, Token: 1}, []string{"arm +490ms"}},
				mStep{11, Control{Data: []byte(`{}`), Received: mBase, Token: 2}, []string{"control refused", "arm +489ms"}},
			)},
		{name: "a leader whose readiness check fails ReadinessThreshold times steps down (§4.7)",
			bucket: oldEmptyBucket,
			cfg:    func(c *Params) { c.ReadinessCheck = true },
			steps: append([]mStep{{0, Health{}, []string{"arm -"}}}, withPrefix(leadPrefix,
				mStep{10, Health{Err: errTest}, []string{"arm +241ms"}},
				mStep{20, Health{Err: errTest}, []string{"arm +231ms"}},
				mStep{30, Health{Err: errTest}, []string{"lose 1 ok", "leader -", "arm +221ms"}},
			)...)},
		{name: "priority: a higher-priority follower asks the holder after a stable LeaseTTL, at most once per LeaseTTL (§4.6)",
			cfg: func(c *Params) { c.Priority = 5 },
			steps: []mStep{
				{0, heldPri(5, "b", 3, 1), []string{"leader b", "arm -"}},
				{0, Synced{}, []string{"arm +500ms"}},
				{250, heldPri(6, "b", 3, 1), nil},
				{500, heldPri(7, "b", 3, 1), nil},
				{750, heldPri(8, "b", 3, 1), []string{"arm +250ms"}},
				{1000, heldPri(9, "b", 3, 1), []string{"ask b", "arm +500ms"}},
				{1250, heldPri(10, "b", 3, 1), []string{"arm +500ms"}},
			}},
		{name: "priority: a PreemptDelay longer than LeaseTTL delays the first request, later ones stay LeaseTTL apart (keepalived's preempt_delay)",
			cfg: func(c *Params) { c.Priority = 5; c.PreemptDelay = 2500 * time.Millisecond },
			steps: []mStep{
				{0, heldPri(5, "b", 3, 1), []string{"leader b", "arm -"}},
				{0, Synced{}, []string{"arm +500ms"}},
				{250, heldPri(6, "b", 3, 1), nil},
				{500, heldPri(7, "b", 3, 1), nil},
				{750, heldPri(8, "b", 3, 1), []string{"arm +500ms"}},
				{1000, heldPri(9, "b", 3, 1), []string{"arm +500ms"}},
				{1250, heldPri(10, "b", 3, 1), []string{"arm +500ms"}},
				{1500, heldPri(11, "b", 3, 1), nil},
				{1750, heldPri(12, "b", 3, 1), nil},
				{2000, heldPri(13, "b", 3, 1), []string{"arm +500ms"}},
				{2250, heldPri(14, "b", 3, 1), []string{"arm +250ms"}},
				{2499, Tick{}, []string{"arm +1ms"}},
				{2500, heldPri(15, "b", 3, 1), []string{"ask b", "arm +500ms"}},
				{2750, heldPri(16, "b", 3, 1), []string{"arm +500ms"}},
				{3250, heldPri(17, "b", 3, 1), []string{"arm +250ms"}},
				{3500, heldPri(18, "b", 3, 1), []string{"ask b", "arm +500ms"}},
			}},
		{name: "priority: a PreemptDelay shorter than LeaseTTL changes nothing: the request waits LeaseTTL",
			cfg: func(c *Params) { c.Priority = 5; c.PreemptDelay = 400 * time.Millisecond },
			steps: []mStep{
				{0, heldPri(5, "b", 3, 1), []string{"leader b", "arm -"}},
				{0, Synced{}, []string{"arm +500ms"}},
				{250, heldPri(6, "b", 3, 1), nil},
				{500, heldPri(7, "b", 3, 1), []string{"arm +500ms"}},
				{750, heldPri(8, "b", 3, 1), []string{"arm +250ms"}},
				{1000, heldPri(9, "b", 3, 1), []string{"ask b", "arm +500ms"}},
				{1250, heldPri(10, "b", 3, 1), []string{"arm +500ms"}},
			}},
		{name: "priority: equal priorities never ask",
			cfg: func(c *Params) { c.Priority = 1 },
			steps: []mStep{
				{0, heldPri(5, "b", 3, 1), nil},
				{0, Synced{}, nil},
				{1000, heldPri(9, "b", 3, 1), []string{"arm +500ms"}},
			}},
	} {
		t.Run(c.name, func(t *testing.T) { runMachineCase(t, c) })
	}
}

// TestMachineLongestTTL holds rule 1: after garbage, the wait is the
// longest TTL the key carried, not the TTL of what it holds now; and the
// knob the simulator's negative control uses turns that off.
func TestMachineLongestTTL(t *testing.T) {
	for _, bug := range []bool{false, true} {
		cfg := machineTestConfig("a")
		m := New(cfg, BucketFacts{LastSeqAtOpen: 5}, 1)
		m.instance = cfg.NodeID
		m.knobs.ShortTTLForNonRecords = bug
		m.Handle(mBase, held(5, "b", 3, 3*time.Second))
		m.Handle(mBase, Synced{})
		at := mBase.Add(100 * time.Millisecond)
		acts := summarizeAll(at, m.Handle(at, garbage(6)))
		seedTTL := map[bool]string{false: "3s", true: "1s"}[bug]
		if want := []string{"write seed rev=6 epoch=3 floor ttl=" + seedTTL, "leader -", "arm -"}; !matchActions(acts, want) {
			t.Fatalf("bug=%v: got %q, want %q", bug, acts, want)
		}
		m.Handle(at, Result{ID: m.req.id, Err: errTest, Class: Transient})
		wait := m.holdUntil().Sub(at)
		if want := map[bool]time.Duration{false: 3 * time.Second, true: time.Second}[bug]; wait != want {
			t.Errorf("bug=%v: waits %v after garbage, want %v", bug, wait, want)
		}
	}
}

var errTest = errorString("test failure")

type errorString string

func (e errorString) Error() string { return string(e) }

// TestMachineRetriedAmbiguousAcquire holds rule 24 (simulator seed 320):
// an acquire times out, is retried at the same epoch and times out again,
// and then the FIRST attempt's record shows up. The tenure counts from the
// first attempt's send time, which the other nodes have been waiting out
// since it landed: past its deadline, the record is given back.
func TestMachineRetriedAmbiguousAcquire(t *testing.T) {
	runMachineCase(t, mCase{bucket: oldEmptyBucket, steps: []mStep{
		{0, Synced{}, []string{"incarnation", "arm -"}},
		{1, incarnation(false, 0), []string{"history", "arm -"}},
		{1, hist(), []string{"write acquire create epoch=1", "arm -"}},
		{201, transient, []string{"arm *"}},
		{260, Tick{}, []string{"incarnation", "arm -"}},
		{260, incarnation(false, 0), []string{"history", "arm -"}},
		{261, hist(), []string{"write acquire create epoch=1", "arm -"}},
		{461, transient, []string{"arm *"}},
		// The first attempt's record (sent at 1ms): its deadline was 901ms.
		{950, held(1, "a", 1, time.Second), []string{"write release-stale rev=1 epoch=1", "arm -"}},
	}})
}

// TestMachineRulesSinceCoreMachine holds the rules main's election gained
// after the machine's first version (docs/design.md §9 rules 19-31), each
// row named after its rule and the TestSafety test it mirrors.
func TestMachineRulesSinceCoreMachine(t *testing.T) {
	inFlight := Result{Err: errTest, Class: Conflict, InFlight: true}
	for _, c := range []mCase{
		{name: "rule 19: a renewal refused while a fenced write was in flight is sent again at once, within its time",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
				mStep{255, inFlight, []string{"write renew rev=1 epoch=1", "arm +646ms"}},
				mStep{257, wrote(2), []string{"arm +244ms"}}, // counted from the first send
			)},
		{name: "rule 19: past the renewal's time, the refusal is a conflict",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
				mStep{451, inFlight, []string{"get", "arm +450ms"}},
			)},
		{name: "rule 23 (TestStoreCreateRefusesAMarker): a create refused by a marker is a lost race, not a write",
			bucket: oldEmptyBucket,
			steps: []mStep{
				{0, Synced{}, []string{"incarnation", "arm -"}},
				{0, incarnation(false, 0), []string{"history", "arm -"}},
				{1, hist(), []string{"write acquire create epoch=1", "arm -"}},
				{2, conflict, []string{"get", "arm -"}},
				{3, notFound, nil},
				{10, marker(1), []string{"arm +1s"}},
			}},
		{name: "rule 25 (TestSafety03RecreatedUnderLongTTLHolder): the stream-created advisory moves a follower to the new bucket, where it writes its floor at once",
			steps: withPrefix(followB,
				mStep{100, BucketCreated{}, []string{"incarnation", "arm -"}},
				mStep{101, incarnation(true, 0), []string{"watch", "arm -"}},
				mStep{102, ok, []string{"leader -", "arm -"}},
				mStep{103, Synced{}, []string{"write seed create epoch=3 floor ttl=1s", "arm -"}},
			)},
		{name: "rule 41 (simulator seed 3030): the leader asks the bucket's identity on the advisory too; a bucket created again ends its tenure, and it carries its epoch there",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{100, BucketCreated{}, []string{"incarnation", "arm +801ms"}}, // the deadline's tick
				mStep{101, incarnation(true, 0), []string{"lose 1 ErrEpochMismatch", "watch", "arm -"}},
				mStep{102, ok, []string{"leader -", "arm -"}},
				mStep{103, Synced{}, []string{"write seed create epoch=1 floor ttl=1s", "arm -"}},
			)},
		{name: "rule 41: an advisory for the leader's own bucket changes nothing",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{100, BucketCreated{}, []string{"incarnation", "arm +801ms"}},
				mStep{101, incarnation(false, 1), []string{"arm +150ms"}},
			)},
		{name: "rule 25: an advisory for the same bucket changes nothing",
			steps: withPrefix(followB,
				mStep{100, BucketCreated{}, []string{"incarnation", "arm -"}},
				mStep{101, incarnation(false, 5), []string{"arm +399ms"}},
			)},
		{name: "rule 26 (TestSafety04CompactedUnderCutOffLeader): a floor is read back within MinLeaseTTL, and written again when found removed",
			steps: withPrefix(followB,
				mStep{100, floorRec(6, 3, time.Second), []string{"leader -", "arm +250ms"}},
				mStep{350, Tick{}, []string{"get", "arm -"}},
				mStep{351, notFound, []string{"incarnation", "arm -"}},
				mStep{352, incarnation(false, 7), []string{"write seed create epoch=3 floor ttl=1s", "arm -"}},
			)},
		{name: "rule 21 (TestSafety03RecreatedAfterTheProbe): before a takeover the bucket's identity is checked; a new bucket is followed, the CAS not made",
			steps: withPrefix(followB,
				mStep{500, readBacks{990, held(5, "b", 3, time.Second)}, nil},
				mStep{1000, Tick{}, []string{"get", "arm -"}},
				mStep{1000, got(held(5, "b", 3, time.Second)), []string{"leader -", "incarnation", "arm -"}},
				mStep{1001, incarnation(true, 2), []string{"watch", "arm -"}},
				mStep{1002, ok, []string{"arm -"}},
				mStep{1003, held(2, "c", 1, time.Second), []string{"leader c", "arm -"}},
				mStep{1003, Synced{}, []string{"write seed rev=2 epoch=3 floor ttl=1s", "arm -"}}, // rule 43
			)},
		{name: "rule 21: a handed-back release seen a while ago is taken only after the identity check",
			setup: func(m *Machine) { m.hand.cooldownUntil = mBase.Add(2 * time.Second) },
			steps: withPrefix(followB,
				mStep{100, released(6, 3, ""), []string{"leader -", "arm +1.9s"}},
				mStep{2000, Tick{}, []string{"incarnation", "arm -"}},
				mStep{2001, incarnation(true, 0), []string{"watch", "arm -"}},
			)},
		{name: "rule 28: the empty-bucket wait ends once anything was written (written and compacted under the watch)",
			bucket: BucketFacts{AgeAtOpen: 300 * time.Millisecond},
			steps: []mStep{
				{0, Synced{}, []string{"arm +700ms"}},
				{700, Tick{}, []string{"incarnation", "arm -"}},
				// Written since it began to wait: the full wait, from now
				// (rule 51), behind a floor that wakes whoever knows more
				// (rule 55).
				{700, incarnation(false, 4), []string{"write seed create epoch=1 floor ttl=1s", "arm -"}},
			}},
		{name: "rule 29 (TestSafety03BucketDeletedThenCreatedAgain): a deleted bucket is waited for, with the memory of the epoch, and followed when created again",
			steps: withPrefix(followB,
				mStep{500, Tick{}, []string{"get", "arm -"}},
				mStep{501, bucketGoneE, []string{"unwatch", "arm +250ms"}},
				mStep{751, Tick{}, []string{"incarnation", "arm -"}},
				mStep{752, bucketGoneE, []string{"arm +250ms"}},
				mStep{1002, Tick{}, []string{"incarnation", "arm -"}},
				mStep{1003, incarnation(true, 0), []string{"watch", "arm -"}},
				mStep{1004, ok, []string{"leader -", "arm -"}},
				mStep{1005, Synced{}, []string{"write seed create epoch=3 floor ttl=1s", "arm -"}},
			)},
		{name: "rule 29 (TestBucketDeletedIsWaitedForUntilStop): the leader loses its tenure; the node waits for the bucket, leading nothing, past any grace, until Stop",
			bucket: oldEmptyBucket,
			steps: withPrefix(withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
				mStep{901, Tick{}, []string{"lose 1 ErrLeaseExpired", "arm -"}},
				mStep{950, transient, []string{"leader -", "get", "arm -"}},
				mStep{951, bucketGoneE, []string{"unwatch", "arm +250ms"}},
			), append(stillGone(1201, 61201),
				mStep{61300, Stop{Token: 5}, []string{"reply 5 ok", "finished"}},
			)...),
			check: func(t *testing.T, m *Machine) {
				if m.err != nil {
					t.Errorf("err = %v after Stop, want nil", m.err)
				}
			}},
		{name: "rule 29 (TestSafety03BucketGoneLongerThanAGrace): a bucket gone 8s is waited for; the epoch carries over into the bucket created again",
			steps: withPrefix(withPrefix(followB,
				mStep{500, Tick{}, []string{"get", "arm -"}},
				mStep{501, bucketGoneE, []string{"unwatch", "arm +250ms"}},
			), append(stillGone(751, 8751),
				mStep{8800, Tick{}, []string{"incarnation", "arm -"}},
				mStep{8801, incarnation(true, 0), []string{"watch", "arm -"}},
				mStep{8802, ok, []string{"leader -", "arm -"}},
				mStep{8803, Synced{}, []string{"write seed create epoch=3 floor ttl=1s", "arm -"}},
				mStep{8804, wrote(1), []string{"arm +250ms"}},
				mStep{9054, readBacks{9794, floorRec(1, 3, time.Second)}, nil},
				mStep{9804, Tick{}, []string{"incarnation", "arm -"}},
				mStep{9804, incarnation(false, 1), []string{"history", "arm -"}},
				mStep{9815, hist(floorRec(1, 3, time.Second)), []string{"write acquire rev=1 epoch=4", "arm -"}},
				mStep{9816, wrote(2), []string{"incarnation", "arm -"}},
				mStep{9816, incarnation(false, 2), []string{"become 4", "leader a", "arm +249ms"}},
			)...)},
		{name: "rule 29: a release refused in a deleted bucket ends the step-down with its error; the node then waits for the bucket",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{100, StepDown{Token: 7}, []string{"lose 1 ok", "leader -", "arm +151ms"}},
				mStep{101, LoseDone{Epoch: 1}, []string{"write release rev=1 epoch=1", "arm -"}},
				mStep{102, bucketGoneE, []string{"cooldown", "reply 7 ErrBucketDeleted", "write release-stale rev=1 epoch=1", "arm -"}},
				mStep{103, bucketGoneE, []string{"unwatch", "arm +250ms"}},
			)},
		{name: "entries of a replaced watch kept while a request was out are dropped with it (simulator seed 230)",
			steps: withPrefix(followB,
				mStep{500, Tick{}, []string{"get", "arm -"}},
				mStep{501, held(6, "b", 3, time.Second), []string{"arm -"}}, // the old watch's, kept
				mStep{502, notFound, []string{"incarnation", "arm -"}},
				mStep{503, incarnation(true, 0), []string{"watch", "arm -"}},
				mStep{504, ok, []string{"leader -", "arm -"}},
				mStep{505, Synced{}, []string{"write seed create epoch=3 floor ttl=1s", "arm -"}},
			)},
		{name: "rule 31 (TestSafety04PurgedWhileTheHighestMemoryIsCutOff): taking over a floor record counts from its revision",
			bucket: BucketFacts{LastSeqAtOpen: 1},
			steps: []mStep{
				{0, held(1, "c", 1, time.Second), []string{"leader c", "arm -"}},
				{0, Synced{}, []string{"arm +500ms"}},
				// c's record, and b's at epoch 2 after it, were compacted.
				{500, Tick{}, []string{"get", "arm -"}},
				{501, notFound, []string{"incarnation", "arm -"}},
				{502, incarnation(false, 4), []string{"write seed create epoch=1 floor ttl=1s", "leader -", "arm -"}},
				{503, wrote(5), []string{"arm +250ms"}},
				{753, readBacks{1493, floorRec(5, 1, time.Second)}, nil},
				{1503, Tick{}, []string{"incarnation", "arm -"}},
				{1503, incarnation(false, 5), []string{"history", "arm -"}},
				{1504, hist(floorRec(5, 1, time.Second)), []string{"write acquire rev=5 epoch=5", "arm -"}},
			}},
		{name: "rule 34 (simulator seed 200270): a takeover decided before entries the watch has since shown is decided again on them, not written",
			bucket: BucketFacts{AgeAtOpen: 300 * time.Millisecond},
			steps: []mStep{
				{0, Synced{}, []string{"arm +700ms"}},
				// Paused past the wait: the tick and the entries of a tenure
				// begun meanwhile, then purged and compacted, arrive at once.
				{1500, Tick{}, []string{"incarnation", "arm -"}},
				{1500, held(1, "c", 1, time.Second), []string{"arm -"}},
				{1500, marker(4), []string{"arm -"}},
				// The check shows the writes (rule 51), and the kept
				// entries decide: a floor over the marker.
				{1501, incarnation(false, 4), []string{"leader c", "write seed rev=4 epoch=1 floor ttl=1s", "leader -", "arm -"}},
			}},
		{name: "rule 35 (simulator seed 339308): a Create that lands above the revision after the bucket's last sequence it was decided on saw writes it did not; it leads nothing and covers its record with a floor",
			bucket: BucketFacts{AgeAtOpen: 300 * time.Millisecond},
			steps: withPrefix(createOnYoungBucket,
				// While the Create is out: c's tenure at epoch 1 (LeaseTTL
				// 3s), then a purge; the key is compacted and the Create
				// lands after them.
				mStep{730, held(1, "c", 1, 3*time.Second), []string{"arm -"}},
				mStep{800, marker(2), []string{"arm -"}},
				// Not "become 1": a floor over its own record, with the TTL
				// of c's record learned from the kept entries, so that c's
				// tenure is waited out and the next epoch counts from the
				// floor's revision (rule 31), not from epoch 1.
				mStep{885, wrote(3), []string{"write seed rev=3 epoch=1 floor ttl=3s", "arm -"}},
				mStep{890, wrote(4), []string{"arm +*"}},
			),
			check: func(t *testing.T, m *Machine) {
				if len(m.deferred) != 0 {
					t.Errorf("kept entries below the Create's revision were not dropped: %d left", len(m.deferred))
				}
				if e, err := m.nextEpoch(); err != nil || e != 4 {
					t.Errorf("next epoch %d (%v), want 4: above every revision before the floor", e, err)
				}
			}},
		{name: "rule 35: a Create decided on the bucket's last sequence that lands just after it leads",
			bucket: BucketFacts{AgeAtOpen: 2 * time.Second},
			steps: []mStep{
				{0, Synced{}, []string{"incarnation", "arm -"}},
				{0, incarnation(false, 0), []string{"history", "arm -"}},
				{5, hist(), []string{"write acquire create epoch=1", "arm -"}},
				{10, wrote(1), []string{"incarnation", "arm -"}},
				{10, incarnation(false, 1), []string{"become 1", "leader a", "arm +*"}},
			}},
		{name: "rule 35 at its boundary (issue 25): a Create that lands two above the last sequence it was decided on, one write unseen, leads nothing",
			// One write between: another node's Create at revision 1,
			// its record then purged from the stream by subject, which
			// writes no marker (the simulator's raw-purge). The watch has
			// shown neither; the Create lands at revision 2. With the
			// boundary moved to +2 it would lead beside c's tenure.
			bucket: BucketFacts{AgeAtOpen: 300 * time.Millisecond},
			steps: withPrefix(createOnYoungBucket,
				mStep{730, wrote(2), []string{"write seed rev=2 epoch=1 floor ttl=1s", "arm -"}},
			)},
		{name: "rule 51 (simulator seed 4794, raw purges): an absent key whose stream moved on since the wait began is waited for again, from now",
			// Another node's Create landed and was purged from the stream
			// by subject (no marker) moments before this node's wait ran
			// out; its holder leads until its renewal conflicts.
			// Since rule 55 the node writes a floor over it at once, which
			// that holder sees (it demotes) and which is waited out.
			bucket: BucketFacts{AgeAtOpen: 300 * time.Millisecond},
			steps: []mStep{
				{0, Synced{}, []string{"arm +700ms"}},
				{700, Tick{}, []string{"incarnation", "arm -"}},
				{701, incarnation(false, 1), []string{"write seed create epoch=1 floor ttl=1s", "arm -"}},
			}},
		{name: "rule 35: a Create that timed out and shows up after writes it did not see leads nothing",
			bucket: BucketFacts{AgeAtOpen: 300 * time.Millisecond},
			steps: withPrefix(createOnYoungBucket,
				mStep{905, transient, []string{"arm +*"}},
				// The watch skipped what came between (a compaction): its
				// own record is the first entry it shows, at revision 3.
				mStep{950, held(3, "a", 1, time.Second), []string{"write seed rev=3 epoch=1 floor ttl=1s", "arm -"}},
			)},
	} {
		t.Run(c.name, func(t *testing.T) { runMachineCase(t, c) })
	}
}

// TestMachineFixesUnderEvaluation holds the machine knob that tries a fix
// for a gap the simulator found in main's rules (docs/sim.md, gap A):
// each row shows main's decision and the knob's.
func TestMachineFixesUnderEvaluation(t *testing.T) {
	// followB, then a forged held record at no more than the epoch this
	// node remembers (below it, rule 43 corrects it), waited out: its
	// epoch may stand for less than a compaction removed.
	forgedLow := func(acquire string) []mStep {
		return withPrefix(followB,
			mStep{100, held(9, "x", 3, time.Second), []string{"leader x", "arm +500ms"}},
			mStep{600, readBacks{1090, held(9, "x", 3, time.Second)}, nil},
			mStep{1100, Tick{}, []string{"get", "arm -"}},
			mStep{1100, got(held(9, "x", 3, time.Second)), []string{"leader -", "incarnation", "arm -"}},
			mStep{1100, incarnation(false, 9), []string{"history", "arm -"}},
			mStep{1101, hist(held(9, "x", 3, time.Second)), []string{acquire, "arm -"}},
		)
	}
	for _, c := range []mCase{
		{name: "gap A, main: a forged low held record seen after others is taken over above the memory only",
			steps: forgedLow("write acquire rev=9 epoch=4")},
		{name: "gap A, revfloor: above its revision too",
			setup: func(m *Machine) { m.knobs.RevisionFloorAlways = true },
			steps: forgedLow("write acquire rev=9 epoch=9")},
	} {
		t.Run(c.name, func(t *testing.T) { runMachineCase(t, c) })
	}
}

// createOnYoungBucket has node a, on a bucket 300ms old with nothing
// written, wait out the rest of LeaseTTL and send its Create at epoch 1.
var createOnYoungBucket = []mStep{
	{0, Synced{}, []string{"arm +700ms"}},
	{700, Tick{}, []string{"incarnation", "arm -"}},
	{700, incarnation(false, 0), []string{"history", "arm -"}},
	{705, hist(), []string{"write acquire create epoch=1", "arm -"}},
}

// createLanded has node a, on a bucket 10s old with nothing written,
// create the key at epoch 1; the write landed, and the bucket's identity
// is asked before leading (rule 38).
var createLanded = withPrefix(createSent, mStep{2, wrote(1), []string{"incarnation", "arm -"}})

// createSent has node a, on a bucket 10s old with nothing written, send
// its Create at epoch 1 (identity, history, then the write).
var createSent = []mStep{
	{0, Synced{}, []string{"incarnation", "arm -"}},
	{1, incarnation(false, 0), []string{"history", "arm -"}},
	{1, hist(), []string{"write acquire create epoch=1", "arm -"}},
}

// staleAfterCutOff has node a lead, be cut off until its deadline ends
// the tenure (the key still names it at epoch 1, revision 1, learned
// before it was cut off), and come back: its stale record is released
// only after the bucket's identity is checked (rule 39).
var staleAfterCutOff = withPrefix(leadPrefix,
	mStep{3, Conn{Connected: false, Reconnects: 0}, []string{"arm +248ms"}},
	mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
	mStep{450, transient, []string{"arm +*"}},
	mStep{902, Tick{}, []string{"lose 1 ErrLeaseExpired", "leader -", "incarnation", "arm -"}},
	mStep{1102, transient, []string{"arm +*"}},
	mStep{1500, Conn{Connected: true, Reconnects: 1}, []string{"incarnation", "arm -"}},
)

// TestMachineRulesOfTheGaps: the rules that closed gaps of docs/sim.md
// (B-E: rules 36-38 and 43) and rule 39, each row failing on the code
// before its rule; the hand-back row is the control (unchanged).
func TestMachineRulesOfTheGaps(t *testing.T) {
	for _, c := range []mCase{
		{name: "rule 47 (issue 26): a floor is not written on a view the watch has moved past; a StepDown right after a new cluster's first election is taken at once",
			// The empty-bucket wait ran out; b's Create and its release
			// (a StepDown at once) reached the watch while the identity
			// check was out. The history showed b's epoch while the view
			// still held the key absent: on main a floor went out, lost,
			// the release was read back as one nobody handed back, and
			// waited out for a LeaseTTL.
			steps: []mStep{
				{0, Synced{}, []string{"arm +1s"}},
				{1000, Tick{}, []string{"incarnation", "arm -"}},
				{1001, held(1, "b", 1, time.Second), []string{"arm -"}}, // kept
				{1001, released(2, 1, ""), []string{"arm -"}},           // kept
				// The check shows the writes (rule 51); the kept entries
				// then decide: b's release, handed back, taken at once.
				{1002, incarnation(false, 4), []string{"leader b", "write acquire rev=2 epoch=2", "leader -", "arm -"}},
			}},
		{name: "rule 48 (§5.5): a record naming this node at its epoch, written by another process with its NodeID, is not adopted",
			// On main it was taken for this node's own late write: the
			// revision adopted, the tenure kept beside the other process.
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{10, heldElsewhere(2, "a", 1, time.Second), []string{"lose 1 ErrEpochMismatch", "arm +500ms"}},
			)},
		{name: "rule 48: another process's record under this NodeID, seen first, is waited out; two more of its revisions stop the node with ErrDuplicateNodeID",
			steps: []mStep{
				// Seen first: perhaps a crashed predecessor's, restarted
				// under the same name. A dead process lands at most one
				// write after it died.
				{0, heldElsewhere(5, "a", 3, time.Second), []string{"leader a", "arm -"}},
				{0, Synced{}, []string{"arm +500ms"}},
				{250, heldElsewhere(6, "a", 3, time.Second), []string{"arm +500ms"}},
				{500, heldElsewhere(7, "a", 3, time.Second), []string{"fail ErrDuplicateNodeID", "finished"}},
			}},
		{name: "rule 48 (chaos seed 99, issue 25): the same record of another process under this NodeID, seen again after the key read absent, counts once",
			// A crashed predecessor's record; a read answered by a lagging
			// replica finds the key absent, and the record shows up again
			// at the same revision, then an older one and the same again.
			// No process wrote anything. (An
			// observer: it writes no floor into the absent key.)
			cfg: func(p *Params) { p.Observer = true },
			steps: []mStep{
				{0, heldElsewhere(5, "a", 3, time.Second), []string{"leader a", "arm -"}},
				{0, Synced{}, []string{"arm +500ms"}},
				{250, heldElsewhere(6, "a", 3, time.Second), []string{"arm +500ms"}}, // its one write in flight
				{750, Tick{}, []string{"get", "arm -"}},
				{751, notFound, []string{"incarnation", "arm -"}},
				{752, incarnation(false, 6), []string{"leader -", "arm +1.25s"}},
				{800, heldElsewhere(6, "a", 3, time.Second), []string{"leader a", "arm +*"}},
				{1300, Tick{}, []string{"get", "arm -"}},
				{1301, notFound, []string{"incarnation", "arm -"}},
				{1302, incarnation(false, 6), []string{"leader -", "arm +1.25s"}},
				{1400, heldElsewhere(5, "a", 3, time.Second), []string{"leader a", "arm +*"}}, // an older one
				{1900, Tick{}, []string{"get", "arm -"}},
				{1901, heldElsewhere(6, "a", 3, time.Second), []string{"arm -"}},
			}},
		{name: "rule 36 (gap B): an entry dropped with its watch still teaches its epoch",
			steps: withPrefix(followB,
				mStep{500, Tick{}, []string{"get", "arm -"}},
				mStep{501, held(6, "b", 7, time.Second), []string{"arm -"}}, // kept, then dropped
				mStep{502, notFound, []string{"incarnation", "arm -"}},
				mStep{503, incarnation(true, 0), []string{"watch", "arm -"}},
				mStep{504, ok, []string{"leader -", "arm -"}},
				mStep{505, Synced{}, []string{"write seed create epoch=7 floor ttl=1s", "arm -"}},
			)},
		{name: "rule 36 (gap B): an older entry read back in the same bucket still teaches its epoch and TTL",
			steps: withPrefix(followB,
				mStep{100, held(2, "c", 9, 3*time.Second), []string{"incarnation", "arm -"}},
				// b's record at 3 is below the 9 learned: corrected (rule 43).
				mStep{105, incarnation(false, 5), []string{"write seed rev=5 epoch=9 floor ttl=3s", "arm -"}},
			),
			check: func(t *testing.T, m *Machine) {
				if m.lv.maxEpoch != 9 || m.lv.maxTTL != 3*time.Second {
					t.Errorf("learned epoch %d and TTL %v, want 9 and 3s", m.lv.maxEpoch, m.lv.maxTTL)
				}
			}},
		{name: "rule 37 (gap C): an older entry from a new bucket moves the node to it, watch and all",
			steps: withPrefix(followB,
				mStep{100, held(2, "c", 1, time.Second), []string{"incarnation", "arm -"}},
				mStep{105, incarnation(true, 2), []string{"watch", "arm -"}},
				mStep{106, ok, []string{"leader -", "arm -"}},
			)},
		{name: "rule 38 (gap D): an acquire that landed in a bucket created since the check leads nothing",
			bucket: oldEmptyBucket,
			steps: withPrefix(createLanded,
				mStep{3, incarnation(true, 1), []string{"watch", "arm -"}},
			)},
		{name: "rule 38: the same bucket: lead from the write's send time",
			bucket: oldEmptyBucket,
			steps: withPrefix(createLanded,
				mStep{3, incarnation(false, 1), []string{"become 1", "leader a", "arm +248ms"}},
			)},
		{name: "rule 39 (simulator seed 2262): a stale record of its own learned a while ago is released only after the bucket's identity is checked",
			bucket: oldEmptyBucket,
			// The bucket was created again meanwhile: follow it, and write
			// nothing on the old revision.
			steps: withPrefix(staleAfterCutOff, mStep{1501, incarnation(true, 2), []string{"watch", "arm -"}})},
		{name: "rule 39: the same bucket: the stale record is released",
			bucket: oldEmptyBucket,
			steps:  withPrefix(staleAfterCutOff, mStep{1501, incarnation(false, 1), []string{"write release-stale rev=1 epoch=1", "arm -"}})},
		{name: "rule 43 (gap E, simulator seed 4733): a held record below the epoch this node remembers is corrected with a floor, not waited out",
			steps: withPrefix(followB,
				mStep{100, held(9, "x", 1, time.Second), []string{"write seed rev=9 epoch=3 floor ttl=1s", "leader x", "arm -"}},
				mStep{101, wrote(10), []string{"leader -", "arm +250ms"}},
			),
			check: func(t *testing.T, m *Machine) {
				if e, err := m.nextEpoch(); err != nil || e != 10 {
					t.Errorf("next epoch %d (%v), want 10: the floor's revision (rule 31)", e, err)
				}
			}},
		{name: "rule 43: a released record below the epoch this node remembers is corrected too",
			steps: withPrefix(followB,
				mStep{100, released(9, 2, ""), []string{"write seed rev=9 epoch=3 floor ttl=1s", "leader -", "arm -"}},
			)},
		{name: "rule 38: a landing checked after the deadline, in the same bucket, is given back",
			bucket: oldEmptyBucket,
			steps: withPrefix(createLanded,
				// Past the deadline (901ms): not led; remembered as ended,
				// so that its record is given back when seen (lastEpoch).
				mStep{950, incarnation(false, 1), []string{"write seed create epoch=1 floor ttl=1s", "arm -"}},
			),
			check: func(t *testing.T, m *Machine) {
				if m.own.t != nil || m.own.lastEpoch != 1 {
					t.Errorf("tenure %v, last epoch %d: want none, and 1 to give back", m.own.t, m.own.lastEpoch)
				}
			}},
		{name: "rule 38: a permanent error on the check after landing is not ignored",
			bucket: oldEmptyBucket,
			steps: withPrefix(createLanded,
				mStep{3, bucketGoneE, []string{"unwatch", "arm +250ms"}}, // waited for (rule 29)
			)},
		{name: "rule 40: a renewal in flight when the leader moves to a new bucket is covered with a floor if it lands there, not released",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +650ms"}},
				mStep{300, BucketCreated{}, []string{"arm +601ms"}}, // kept: the renewal is out
				mStep{450, transient, []string{"incarnation", "arm +451ms"}},
				mStep{451, incarnation(true, 0), []string{"lose 1 ErrEpochMismatch", "watch", "arm -"}},
				mStep{452, ok, []string{"leader -", "arm -"}},
				// Its renewal, still in flight, landed in the new bucket.
				mStep{453, held(1, "a", 1, time.Second), []string{"arm -"}},
				mStep{453, Synced{}, []string{"write seed rev=1 epoch=1 floor ttl=1s", "arm -"}},
			),
			check: func(t *testing.T, m *Machine) {
				if e, err := m.nextEpoch(); err != nil || e < 2 {
					t.Errorf("next epoch %d (%v), want above the blind epoch 1", e, err)
				}
			}},
		{name: "rule 45 (simulator seed 633042, million-seed run): a landing the key moved past while its check was out is not led",
			bucket: oldEmptyBucket,
			steps: withPrefix(createLanded,
				// Kept behind the check: another node's record over ours.
				mStep{100, held(2, "c", 2, time.Second), []string{"arm -"}},
				mStep{101, incarnation(false, 2), []string{"leader c", "arm +500ms"}}, // not "become 1"
			)},
		{name: "rule 38: a hand-back taken at once is led as soon as it landed (the handover's one write)",
			steps: withPrefix(followB,
				mStep{100, released(6, 3, ""), []string{"write acquire rev=6 epoch=4", "leader -", "arm -"}},
				mStep{101, wrote(7), []string{"become 4", "leader a", "arm +249ms"}},
			)},
	} {
		t.Run(c.name, func(t *testing.T) { runMachineCase(t, c) })
	}
}
