package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/freeport"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Every sentinel names the package first, like vip's and health's, and no
// two share a wording.
func TestSentinelsCarryThePackagePrefix(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, err := range []error{ErrLeaseExpired, ErrEpochMismatch, ErrNotLeader, ErrAlreadyLeader, ErrCASFailed,
		ErrNotStarted, ErrAlreadyStarted, ErrInCooldown, ErrInvalidConfig, ErrBucketDeleted, ErrPermissionDenied,
		ErrBucketConfig, ErrStopped, ErrEpochExhausted, ErrNoJetStream, ErrCalledFromHook,
		ErrConnect, wire.ErrInvalidLease, ErrNotReady, ErrReleaseFailed, ErrDuplicateNodeID} {
		msg := err.Error()
		if !strings.HasPrefix(msg, "cluster: ") {
			t.Errorf("%q does not start with \"cluster: \"", msg)
		}
		if seen[msg] {
			t.Errorf("%q is used twice", msg)
		}
		seen[msg] = true
	}
	if strings.Contains(ErrEpochMismatch.Error(), "took over") {
		t.Errorf("ErrEpochMismatch = %q: it is also returned when nobody took over", ErrEpochMismatch)
	}
}

// A failed Start is honest: its error wraps a sentinel, Err says why the
// node stopped, Done is closed, and a second Start says it already ran
// and why it stopped.
func TestFailedStartIsHonest(t *testing.T) {
	t.Parallel()
	ports, err := freeport.Reserve(1)
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("nats://127.0.0.1:%d", ports[0]) // nobody listens here
	n, err := NewNode(testConfig("c", "a", url), nil)

	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = n.Start(c)
	if !errors.Is(err, ErrConnect) || !errors.Is(err, nats.ErrNoServers) {
		t.Fatalf("Start against no server = %v, want ErrConnect wrapping nats.ErrNoServers", err)
	}
	select {
	case <-n.Done():
	default:
		t.Error("Done is not closed after a failed Start")
	}
	if !errors.Is(n.Err(), ErrConnect) {
		t.Errorf("Err() = %v, want the Start error", n.Err())
	}
	again := n.Start(c)
	if !errors.Is(again, ErrAlreadyStarted) || !errors.Is(again, ErrConnect) {
		t.Errorf("second Start = %v, want ErrAlreadyStarted naming why it stopped", again)
	}
	if err := n.Stop(c); err != nil {
		t.Errorf("Stop after a failed Start = %v", err)
	}
}

// DecodeLease's errors wrap wire.ErrInvalidLease, never ErrInvalidConfig: a
// bad value in the store is not the caller's configuration.
func TestDecodeLeaseErrorsWrapErrInvalidLease(t *testing.T) {
	t.Parallel()
	for _, v := range []string{`{not json`, `{"node_id":"a..b","epoch":1}`, `{"node_id":"a","epoch":1,"next":"x y"}`, `{"node_id":"a","epoch":0}`, strings.Repeat(" ", wire.MaxLeaseSize+1)} {
		_, err := decodeLease([]byte(v), 1)
		if !errors.Is(err, wire.ErrInvalidLease) || errors.Is(err, ErrInvalidConfig) {
			t.Errorf("DecodeLease(%.40q) = %v, want wire.ErrInvalidLease and not ErrInvalidConfig", v, err)
		}
	}
}

// A KV conflict's text says "nats: " once; errors.As still finds the
// server's API error (issue 26: StepDown printed "nats: nats: API error").
func TestTidyNATSErrorText(t *testing.T) {
	t.Parallel()
	api := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequenceConstant, Description: "wrong last sequence"}
	raw := fmt.Errorf("nats: %w", api) // as nats.go's KV wraps it
	err := fmt.Errorf("%w: %w", ErrReleaseFailed, store.Tidy(raw))
	if strings.Contains(err.Error(), "nats: nats:") {
		t.Errorf("error text %q says nats: twice", err)
	}
	var got *jetstream.APIError
	if !errors.As(err, &got) || got.ErrorCode != api.ErrorCode || !errors.Is(err, ErrReleaseFailed) {
		t.Errorf("tidied error lost its chain: %v", err)
	}
}
