package cluster

import (
	"context"
	"fmt"
	"github.com/ozanturksever/go-cluster/state"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/fenced"
)

// TestStateWriteOutcome: each way a fenced write ends has the label value
// cluster.Metrics documents.
func TestStateWriteOutcome(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "ok"},
		{fmt.Errorf("state put: %w: %w: lease moved", state.ErrFenced, ErrNotLeader), "fenced"},
		{fmt.Errorf("state put: %w", ErrNotLeader), "not_leader"},
		{fmt.Errorf("state commit: %w: \"a\" is at revision 3, expected 1", state.ErrConflict), "conflict"},
		{fmt.Errorf("state put: %w: %w: the tenure ended", state.ErrWriteUncertain, ErrNotLeader), "uncertain"},
		{fmt.Errorf("state put: %w", context.DeadlineExceeded), "error"},
	} {
		if got := fenced.Outcome(tc.err); got != tc.want {
			t.Errorf("fenced.Outcome(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	// A Metrics without the extension is left alone.
	engineMetrics{noMetrics{}}.ObserveStateWrite(fenced.OutcomeOK)
}
