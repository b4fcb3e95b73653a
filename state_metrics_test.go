package cluster

import (
	"context"
	"fmt"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/fenced"
)

func TestStateWriteOutcome(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want StateWriteOutcome
	}{
		{nil, StateWriteOK},
		{fmt.Errorf("state put: %w: %w: lease moved", ErrFenced, ErrNotLeader), StateWriteFenced},
		{fmt.Errorf("state put: %w", ErrNotLeader), StateWriteNotLeader},
		{fmt.Errorf("state commit: %w: \"a\" is at revision 3, expected 1", ErrStateConflict), StateWriteConflict},
		{fmt.Errorf("state put: %w: %w: the tenure ended", ErrWriteUncertain, ErrNotLeader), StateWriteUncertain},
		{fmt.Errorf("state put: %w", context.DeadlineExceeded), StateWriteError},
	} {
		if got := StateWriteOutcome(fenced.Outcome(tc.err)); got != tc.want {
			t.Errorf("fenced.Outcome(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	// A Metrics without the extension is left alone.
	observeStateWrite(noMetrics{}, fenced.OutcomeOK)
}
