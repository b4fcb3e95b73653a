package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestClassify(t *testing.T) {
	raw10164 := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequenceConstant, Description: "wrong last sequence"}
	raw10071 := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence, Description: "wrong last sequence: 4"}
	cases := []struct {
		err  error
		want errClass
	}{
		{raw10071, classConflict},
		{raw10164, classConflict}, // unwrapped, as Create can return it
		{fmt.Errorf("create: %w", raw10164), classConflict},
		{jetstream.ErrKeyExists, classConflict},
		{fmt.Errorf("%w: %w", raw10071, jetstream.ErrKeyRevisionMismatch), classConflict},
		{context.DeadlineExceeded, classTransient},
		{nats.ErrTimeout, classTransient},
		{jetstream.ErrStreamNotFound, classTransient}, // unconfirmed: maybe a recovering server
		{fmt.Errorf("x: %w", ErrBucketDeleted), classPermanent},
		{fmt.Errorf("x: %w", ErrPermissionDenied), classPermanent},
		{nats.ErrConnectionClosed, classPermanent},
	}
	for _, tc := range cases {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	if !errors.Is(fmt.Errorf("wrap: %w", ErrBucketDeleted), ErrBucketDeleted) {
		t.Error("sentinel does not survive wrapping")
	}
}
