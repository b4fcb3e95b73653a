package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/store"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	raw10164 := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequenceConstant, Description: "wrong last sequence"}
	raw10071 := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence, Description: "wrong last sequence: 4"}
	cases := []struct {
		err  error
		want election.ErrClass
	}{
		{raw10071, election.Conflict},
		{raw10164, election.Conflict}, // unwrapped, as Create can return it
		{fmt.Errorf("create: %w", raw10164), election.Conflict},
		{jetstream.ErrKeyExists, election.Conflict},
		{fmt.Errorf("%w: %w", raw10071, jetstream.ErrKeyRevisionMismatch), election.Conflict},
		{context.DeadlineExceeded, election.Transient},
		{nats.ErrTimeout, election.Transient},
		{jetstream.ErrStreamNotFound, election.Transient}, // unconfirmed: maybe a recovering server
		{fmt.Errorf("x: %w", ErrBucketDeleted), election.Permanent},
		{fmt.Errorf("x: %w", ErrPermissionDenied), election.Permanent},
		{nats.ErrConnectionClosed, election.Permanent},
	}
	for _, tc := range cases {
		if got := store.Classify(tc.err); got != tc.want {
			t.Errorf("store.Classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	if !errors.Is(fmt.Errorf("wrap: %w", ErrBucketDeleted), ErrBucketDeleted) {
		t.Error("sentinel does not survive wrapping")
	}
}
