package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// What an error means to the election: a passing fault, a lost
// compare-and-swap, or a permanent cause; and the error's text tidied.

// ExplainJetStream names a server (or account) without JetStream, which
// otherwise shows only as a lookup that fails or times out.
func ExplainJetStream(err error) error {
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		return fmt.Errorf("%w: %w: JetStream is not enabled on the server or for this account", wire.ErrNoJetStream, err)
	}
	return err
}

// minValueSize is the smallest MaxValueSize a bucket may have: a lease
// record is about 150 bytes, MaxLeaseSize at most.
const minValueSize = wire.MaxLeaseSize

// CheckBucket refuses an existing bucket whose settings would break the
// election; the error wraps wire.ErrBucketConfig and wire.ErrInvalidConfig. Other
// settings (History above 1, replicas, storage) only cost.
func CheckBucket(status jetstream.KeyValueStatus) error {
	if ttl := status.TTL(); ttl > 0 {
		return fmt.Errorf("%w: %w: bucket %q has a TTL of %v: the lease would age out of the store, and with it the epoch and the longest TTL the key carries; use a bucket without TTL",
			wire.ErrBucketConfig, wire.ErrInvalidConfig, status.Bucket(), ttl)
	}
	if bs, ok := status.(*jetstream.KeyValueBucketStatus); ok {
		if max := bs.StreamInfo().Config.MaxMsgSize; max > 0 && max < minValueSize {
			return fmt.Errorf("%w: %w: bucket %q allows values of %d bytes, at least %d needed",
				wire.ErrBucketConfig, wire.ErrInvalidConfig, status.Bucket(), max, minValueSize)
		}
	}
	return nil
}

// Classify sorts a KV error. A lost CAS comes back as API error 10071 on a
// single server and 10164 on a replicated stream, sometimes wrapped as
// ErrKeyExists or ErrKeyRevisionMismatch and sometimes not, so the codes
// are checked too. Only causes that explain has confirmed are permanent: a
// "stream not found" alone can be a server still recovering.
func Classify(err error) election.ErrClass {
	if err == nil {
		return election.Transient
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jetstream.JSErrCodeStreamWrongLastSequence, jetstream.JSErrCodeStreamWrongLastSequenceConstant:
			return election.Conflict
		case jetstream.JSErrCodeStreamMessageExceedsMaximum:
			return election.Permanent // the bucket's MaxValueSize changed under us
		}
	}
	switch {
	case errors.Is(err, wire.ErrBucketDeleted), errors.Is(err, wire.ErrPermissionDenied), errors.Is(err, wire.ErrBucketConfig),
		errors.Is(err, wire.ErrNoJetStream), errors.Is(err, wire.ErrEpochExhausted), errors.Is(err, wire.ErrProtocolVersion), errors.Is(err, nats.ErrConnectionClosed):
		return election.Permanent
	case errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return election.Conflict
	}
	return election.Transient
}

// InFlightRefusal says a replicated stream refused a write checked on a
// subject because another write checked on it was still in flight: the
// check was not made, and the same write may succeed a moment later.
func InFlightRefusal(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// tidiedError is a NATS error whose text says "nats: " once: nats.go's
// KV wraps an API error ("nats: API error: ...") in its own "nats: ..."
// error, and users read "nats: nats: API error". Is and As see the error
// as it was.
type tidiedError struct{ err error }

func (e tidiedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), "nats: nats: ", "nats: ")
}

func (e tidiedError) Unwrap() error { return e.err }

// Tidy returns err with the doubled "nats: " prefix removed from its text.
func Tidy(err error) error {
	if err == nil || !strings.Contains(err.Error(), "nats: nats: ") {
		return err
	}
	if _, ok := err.(tidiedError); ok {
		return err
	}
	return tidiedError{err}
}

// Pause waits a little longer on each attempt, at most 20ms: between
// asking again after an InFlightRefusal.
func Pause(ctx context.Context, attempt int) error {
	d := min(time.Duration(attempt)*200*time.Microsecond, 20*time.Millisecond)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
