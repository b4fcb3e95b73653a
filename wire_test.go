package cluster

import (
	"reflect"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TestLeaseIsTheWireRecord: cluster.Lease, which carries the
// specification's methods (IsExpired, IsValid, ...), converts field by
// field into internal/wire's Lease, the one the election decodes; this
// holds the fields and JSON tags equal, so a record means the same on
// both sides. The step-down payloads, limits and causes have one
// definition, in internal/wire and internal/election, which cluster
// re-exports.
func TestLeaseIsTheWireRecord(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]any{
		{Lease{}, wire.Lease{}},
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
}

// TestReexportedErrorsKeepTheirMessages: the sentinels the election
// defines and cluster re-exports say what they said when cluster defined
// them.
func TestReexportedErrorsKeepTheirMessages(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]string{
		ErrLeaseExpired:      "cluster: lease expired",
		ErrEpochMismatch:     "cluster: epoch mismatch",
		ErrNotLeader:         "cluster: not leader",
		ErrAlreadyLeader:     "cluster: already leader",
		ErrInvalidConfig:     "cluster: invalid config",
		ErrBucketDeleted:     "cluster: bucket deleted",
		ErrStopped:           "cluster: node stopped",
		ErrEpochExhausted:    "cluster: epoch exhausted",
		ErrReleaseFailed:     "cluster: lease not released",
		ErrDuplicateNodeID:   "cluster: NodeID used by another process",
		wire.ErrInvalidLease: "cluster: not a lease record",
		ErrNotReady:          "cluster: not ready",
	} {
		if err.Error() != want {
			t.Errorf("%q, want %q", err, want)
		}
	}
}
