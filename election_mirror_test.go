package cluster

import (
	"reflect"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TestElectionMirrorsPublicTypes: internal/wire and the election keep
// their own copies of the lease record, the step-down payloads, the
// limits and the causes that package cluster publishes (they import the
// standard library only). They convert into each other field by field;
// this holds the JSON tags and the limits equal too, so a record or a
// request means the same on both sides.
func TestElectionMirrorsPublicTypes(t *testing.T) {
	for _, pair := range [][2]any{
		{Lease{}, wire.Lease{}},
		{StepDownRequest{}, wire.StepDownRequest{}},
		{StepDownReply{}, wire.StepDownReply{}},
	} {
		a, b := reflect.TypeOf(pair[0]), reflect.TypeOf(pair[1])
		if a.NumField() != b.NumField() {
			t.Fatalf("%v has %d fields, %v %d", a, a.NumField(), b, b.NumField())
		}
		for i := range a.NumField() {
			fa, fb := a.Field(i), b.Field(i)
			if fa.Name != fb.Name || fa.Type != fb.Type || fa.Tag.Get("json") != fb.Tag.Get("json") {
				t.Errorf("%v.%s %v `json:%q` differs from %v.%s %v `json:%q`",
					a, fa.Name, fa.Type, fa.Tag.Get("json"), b, fb.Name, fb.Type, fb.Tag.Get("json"))
			}
		}
	}
	for _, c := range []struct {
		name        string
		pub, mirror any
	}{
		{"MaxLeaseSize", MaxLeaseSize, wire.MaxLeaseSize},
		{"MaxLeaseTTL", MaxLeaseTTL, wire.MaxLeaseTTL},
		{"MaxControlRequestSize", MaxControlRequestSize, wire.MaxControlRequestSize},
		{"MaxIdentifierLen", MaxIdentifierLen, wire.MaxIdentifierLen},
		{"MaxNodeIDLen", MaxNodeIDLen, wire.MaxNodeIDLen},
		{"ElectionCreated", string(ElectionCreated), string(election.CauseCreated)},
		{"ElectionReleased", string(ElectionReleased), string(election.CauseReleased)},
		{"ElectionExpired", string(ElectionExpired), string(election.CauseExpired)},
	} {
		if c.pub != c.mirror {
			t.Errorf("%s is %v in cluster and %v in internal/wire or internal/election", c.name, c.pub, c.mirror)
		}
	}
}

// TestReexportedErrorsKeepTheirMessages: the sentinels the election
// defines and cluster re-exports say what they said when cluster defined
// them.
func TestReexportedErrorsKeepTheirMessages(t *testing.T) {
	for err, want := range map[error]string{
		ErrLeaseExpired:    "cluster: lease expired",
		ErrEpochMismatch:   "cluster: epoch mismatch",
		ErrNotLeader:       "cluster: not leader",
		ErrAlreadyLeader:   "cluster: already leader",
		ErrInvalidConfig:   "cluster: invalid config",
		ErrBucketDeleted:   "cluster: bucket deleted",
		ErrStopped:         "cluster: node stopped",
		ErrEpochExhausted:  "cluster: epoch exhausted",
		ErrReleaseFailed:   "cluster: lease not released",
		ErrDuplicateNodeID: "cluster: NodeID used by another process",
		ErrInvalidLease:    "cluster: not a lease record",
		ErrNotReady:        "cluster: not ready",
	} {
		if err.Error() != want {
			t.Errorf("%q, want %q", err, want)
		}
	}
}
