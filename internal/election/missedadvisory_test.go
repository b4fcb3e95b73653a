package election

import (
	"testing"
)

// Rule 53 (simulator seed 645781): the stream-created advisory is a core
// NATS message, lost to a node that is disconnected when it is sent. A
// reconnect asks the bucket's identity, as the advisory would have.
// Rule 54 (simulator seed 354333): an advisory that came while the
// leader's renewal was out is asked first when that renewal conflicts,
// before the read and the lookup the conflict would make (rule 41).
func TestMachineMissedAdvisory(t *testing.T) {
	for _, c := range []mCase{
		{name: "rule 53: a follower that reconnects asks the bucket's identity at once, and follows a bucket created meanwhile",
			steps: withPrefix(followB,
				mStep{100, Conn{Connected: false}, []string{"arm +*"}},
				mStep{1100, Conn{Connected: true, Reconnects: 1}, []string{"incarnation", "arm -"}},
				mStep{1101, incarnation(true, 0), []string{"watch", "arm -"}},
			)},
		{name: "rule 53: a reconnect to the same bucket changes nothing but the expiry count",
			steps: withPrefix(followB,
				mStep{100, Conn{Connected: false}, []string{"arm +*"}},
				mStep{1100, Conn{Connected: true, Reconnects: 1}, []string{"incarnation", "arm -"}},
				mStep{1101, incarnation(false, 5), []string{"arm +*"}},
			)},
		{name: "rule 54: an advisory kept while the renewal was out is asked first when it conflicts",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +*"}},
				mStep{260, BucketCreated{}, []string{"arm +*"}},
				mStep{600, conflict, []string{"incarnation", "arm +*"}},
				mStep{601, incarnation(true, 0), []string{"lose 1 ErrEpochMismatch", "watch", "arm -"}},
			)},
		{name: "rule 54: the renewal goes on after the advisory's check finds the same bucket",
			bucket: oldEmptyBucket,
			steps: withPrefix(leadPrefix,
				mStep{251, Tick{}, []string{"write renew rev=1 epoch=1", "arm +*"}},
				mStep{260, BucketCreated{}, []string{"arm +*"}},
				mStep{300, conflict, []string{"incarnation", "arm +*"}},
				mStep{301, incarnation(false, 2), []string{"write renew rev=1 epoch=1", "arm +*"}},
			)},
	} {
		t.Run(c.name, func(t *testing.T) { runMachineCase(t, c) })
	}
}
