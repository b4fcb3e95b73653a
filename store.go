package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// store is the one real backend of the election: the cluster's KV bucket.
// Every write to the lease is a compare-and-swap on the KV revision.
type store struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	api    jsAPI // the JetStream API js uses: subjects of raw requests and publishes
	kv     jetstream.KeyValue
	bucket string
	// clusterID names the members bucket too, whose permission
	// violations are not the election's (isMembersViolation).
	clusterID string
	// lookupTimeout bounds the bucket lookup that confirms a deletion.
	lookupTimeout time.Duration
	// metadata is the bucket's stream metadata when it was opened.
	metadata map[string]string
}

// openStore binds to the bucket, creating it when absent with opts
// (ensureBucket). An existing bucket is used as it is.
func openStore(ctx context.Context, nc *nats.Conn, api jsAPI, clusterID string, opts BucketOptions, lookupTimeout time.Duration) (*store, error) {
	js, err := api.open(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	s := &store{nc: nc, js: js, api: api, bucket: BucketName(clusterID), clusterID: clusterID, lookupTimeout: lookupTimeout}
	kv, status, _, err := ensureBucket(ctx, js, clusterID, opts)
	if errors.Is(err, nats.ErrNoResponders) {
		// Nobody serves the stream API: a server (or account) without
		// JetStream, or one still starting. The account info tells.
		if _, aerr := js.AccountInfo(ctx); errors.Is(aerr, jetstream.ErrJetStreamNotEnabled) || errors.Is(aerr, jetstream.ErrJetStreamNotEnabledForAccount) {
			err = fmt.Errorf("open bucket %q: %w", s.bucket, aerr)
		}
	}
	if err != nil {
		// Not explain: at start a missing bucket was never there to be deleted.
		return nil, s.explainPermission(explainJetStream(err))
	}
	s.kv = kv
	s.metadata = status.Metadata()
	return s, nil
}

// campaignable refuses a bucket a campaigning node cannot share with the
// nodes already there: one of another protocol version, by its metadata
// or by its lease record (old and new nodes never run together:
// docs/production.md says how to move a cluster), or one that keeps no
// LeaseTTL. It returns the bucket's metadata. An observer, which writes
// nothing, needs none of it.
func (s *store) campaignable(ctx context.Context) (bucketmeta.Meta, error) {
	meta, err := bucketmeta.Parse(s.metadata)
	if err != nil {
		return meta, fmt.Errorf("%w: %w: bucket %q: %w", ErrBucketConfig, ErrInvalidConfig, s.bucket, err)
	}
	if meta.LeaseTTL == 0 {
		// Without it nodes configured with different TTLs could each wait
		// only their own (I2 in docs/design.md).
		return meta, fmt.Errorf("%w: %w: bucket %q has no %s metadata, the cluster's one LeaseTTL: run go-cluster init --lease-ttl on it (or init --upgrade on a bucket of protocol 1)",
			ErrBucketConfig, ErrInvalidConfig, s.bucket, bucketmeta.KeyLeaseTTL)
	}
	if meta.Protocol != 0 && meta.Protocol != wire.Protocol {
		return meta, fmt.Errorf("%w: bucket %q is marked for protocol %d, this node runs protocol %d",
			ErrProtocolVersion, s.bucket, meta.Protocol, wire.Protocol)
	}
	e, err := s.kv.Get(ctx, leaseKey)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return meta, nil
	case err != nil:
		return meta, s.explain(err)
	}
	if l, derr := wire.DecodeLease(e.Value(), e.Revision()); derr == nil && l.Version != wire.Protocol {
		return meta, fmt.Errorf("%w: the lease record of bucket %q was written by protocol %d (revision %d), this node runs protocol %d",
			ErrProtocolVersion, s.bucket, max(l.Version, 1), e.Revision(), wire.Protocol)
	}
	return meta, nil
}

// explainJetStream names a server (or account) without JetStream, which
// otherwise shows only as a lookup that fails or times out.
func explainJetStream(err error) error {
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		return fmt.Errorf("%w: %w: JetStream is not enabled on the server or for this account", ErrNoJetStream, err)
	}
	return err
}

// minValueSize is the smallest MaxValueSize a bucket may have: a lease
// record is about 150 bytes, MaxLeaseSize at most.
const minValueSize = MaxLeaseSize

// checkBucket refuses an existing bucket whose settings would break the
// election; the error wraps ErrBucketConfig and ErrInvalidConfig. Other
// settings (History above 1, replicas, storage) only cost.
func checkBucket(status jetstream.KeyValueStatus) error {
	if ttl := status.TTL(); ttl > 0 {
		return fmt.Errorf("%w: %w: bucket %q has a TTL of %v: the lease would age out of the store, and with it the epoch and the longest TTL the key carries; use a bucket without TTL",
			ErrBucketConfig, ErrInvalidConfig, status.Bucket(), ttl)
	}
	if bs, ok := status.(*jetstream.KeyValueBucketStatus); ok {
		if max := bs.StreamInfo().Config.MaxMsgSize; max > 0 && max < minValueSize {
			return fmt.Errorf("%w: %w: bucket %q allows values of %d bytes, at least %d needed",
				ErrBucketConfig, ErrInvalidConfig, status.Bucket(), max, minValueSize)
		}
	}
	return nil
}

// errClass says what the election does after an error (election.ErrClass).
type errClass = election.ErrClass

const (
	classTransient = election.Transient // retry with backoff; outcome of a write unknown
	classConflict  = election.Conflict  // lost a compare-and-swap
	classPermanent = election.Permanent // stop campaigning and surface it
)

// classify sorts a KV error. A lost CAS comes back as API error 10071 on a
// single server and 10164 on a replicated stream, sometimes wrapped as
// ErrKeyExists or ErrKeyRevisionMismatch and sometimes not, so the codes
// are checked too. Only causes that explain has confirmed are permanent: a
// "stream not found" alone can be a server still recovering.
func classify(err error) errClass {
	if err == nil {
		return classTransient
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jetstream.JSErrCodeStreamWrongLastSequence, jetstream.JSErrCodeStreamWrongLastSequenceConstant:
			return classConflict
		case jetstream.JSErrCodeStreamMessageExceedsMaximum:
			return classPermanent // the bucket's MaxValueSize changed under us
		}
	}
	switch {
	case errors.Is(err, ErrBucketDeleted), errors.Is(err, ErrPermissionDenied), errors.Is(err, ErrBucketConfig),
		errors.Is(err, ErrNoJetStream), errors.Is(err, ErrEpochExhausted), errors.Is(err, ErrProtocolVersion), errors.Is(err, nats.ErrConnectionClosed):
		return classPermanent
	case errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return classConflict
	}
	return classTransient
}

// inFlightRefusal says a replicated stream refused a write checked on a
// subject because another write checked on it was still in flight: the
// check was not made, and the same write may succeed a moment later.
func inFlightRefusal(err error) bool {
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

// tidy returns err with the doubled "nats: " prefix removed from its text.
func tidy(err error) error {
	if err == nil || !strings.Contains(err.Error(), "nats: nats: ") {
		return err
	}
	if _, ok := err.(tidiedError); ok {
		return err
	}
	return tidiedError{err}
}

// explain turns errors that hide a permanent cause into ErrBucketDeleted or
// ErrPermissionDenied. The server reports a publish permission violation
// asynchronously, so a request merely times out; the connection's last error
// tells why. A deleted bucket shows as "stream not found", no responders, or
// (jetstream publish retries on no responders) a timeout on a live
// connection: a bucket lookup tells for sure.
func (s *store) explain(err error) error {
	if err == nil {
		return nil
	}
	err = tidy(err)
	if perm := s.explainPermission(err); perm != err {
		return perm
	}
	suspect := errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) ||
		errors.Is(err, nats.ErrStreamNotFound) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrNoResponders) ||
		(errors.Is(err, context.DeadlineExceeded) && s.nc.IsConnected())
	if suspect && s.bucketGone() {
		return fmt.Errorf("%w: %w", ErrBucketDeleted, err)
	}
	return err
}

// explainPermission wraps err with ErrPermissionDenied when the server has
// refused this connection a subject the node uses: one naming the bucket
// (KV writes, the stream's API), or the account info request while the
// bucket is opened. Any other violation may be the application's, on a
// shared connection, or the members bucket's (best effort): not ours.
func (s *store) explainPermission(err error) error {
	if err == nil {
		return nil
	}
	last := s.nc.LastError()
	if last == nil || !errors.Is(last, nats.ErrPermissionViolation) {
		return err
	}
	msg := last.Error()
	api := s.api.prefix()
	if strings.Contains(msg, api+"CONSUMER.DELETE.") {
		return err // deleting a dropped watch's consumer is best effort: the server removes it when idle
	}
	if isMembersViolation(msg, s.clusterID) {
		return err // the member record is best effort (members.go)
	}
	// The account info is read only while opening the bucket (s.kv is
	// then nil): refused later, it was the members bucket's creation's.
	if strings.Contains(msg, s.bucket) || (s.kv == nil && strings.Contains(msg, `"`+api+`INFO"`)) {
		return fmt.Errorf("%w: %w (%v)", ErrPermissionDenied, err, last)
	}
	return err
}

// bucketGone asks the server whether the bucket still exists.
func (s *store) bucketGone() bool {
	ctx, cancel := context.WithTimeout(context.Background(), s.lookupTimeout)
	defer cancel()
	_, err := s.js.KeyValue(ctx, s.bucket)
	return errors.Is(err, jetstream.ErrBucketNotFound)
}

// create writes value under key only if the key has no entry at all and
// the stream's last sequence is lastSeq (C3 in docs/design.md): nothing
// was written anywhere in the bucket since the node saw the key absent.
// Not KV Create, which also writes over a delete or purge marker: a
// marker is a value, written over only by a CAS on its revision.
func (s *store) create(ctx context.Context, key string, value []byte, lastSeq uint64) (uint64, error) {
	msg := &nats.Msg{Subject: s.api.publishSubject(kvSubject(s.bucket, key)), Data: value, Header: nats.Header{}}
	msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	msg.Header.Set(jetstream.ExpectedLastSeqHeader, strconv.FormatUint(lastSeq, 10))
	ack, err := s.js.PublishMsg(ctx, msg)
	if err != nil {
		return 0, s.explain(err)
	}
	return ack.Sequence, nil
}

// confirm reads the bucket's stream info (C4): the incarnation, its
// metadata, its last sequence and its age on the server's clock. One
// request, decoded only as far as the election reads it: every landing
// waits for it (a full jetstream.StreamInfo costs half as much again).
func (s *store) confirm(ctx context.Context) (election.Incarnation, error) {
	msg, err := s.nc.RequestWithContext(ctx, s.api.prefix()+"STREAM.INFO."+kvStream(s.bucket), nil)
	if err != nil {
		return election.Incarnation{}, s.explain(err)
	}
	var info struct {
		Error   *jetstream.APIError `json:"error"`
		Created time.Time           `json:"created"`
		Config  struct {
			Metadata map[string]string `json:"metadata"`
		} `json:"config"`
		State struct {
			LastSeq uint64 `json:"last_seq"`
		} `json:"state"`
		TimeStamp time.Time `json:"ts"`
	}
	if err := json.Unmarshal(msg.Data, &info); err != nil {
		return election.Incarnation{}, fmt.Errorf("stream info of bucket %q: %w", s.bucket, err)
	}
	if e := info.Error; e != nil {
		if e.ErrorCode == jetstream.JSErrCodeStreamNotFound {
			return election.Incarnation{}, s.explain(jetstream.ErrStreamNotFound)
		}
		return election.Incarnation{}, s.explain(e)
	}
	meta, err := bucketmeta.Parse(info.Config.Metadata)
	if err != nil {
		return election.Incarnation{}, fmt.Errorf("%w: %w: bucket %q: %w", ErrBucketConfig, ErrInvalidConfig, s.bucket, err)
	}
	inc := election.Incarnation{Created: info.Created, EpochBase: meta.EpochBase, Protocol: meta.Protocol,
		LeaseTTL: meta.LeaseTTL, MaxTTL: meta.MaxTTL, LastSeq: info.State.LastSeq}
	if !info.Created.IsZero() && !info.TimeStamp.IsZero() {
		inc.Age = max(info.TimeStamp.Sub(info.Created), 0)
	}
	return inc, nil
}

// update writes value under key only if its latest revision is rev.
func (s *store) update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	rev, err := s.kv.Update(ctx, key, value, rev)
	return rev, s.explain(err)
}

// renew is update for the leader's renewals. A renewal runs against the
// tenure deadline, so it never spends time on the bucket lookup that tells
// a deleted bucket from a slow one: the leader retries until its deadline,
// and a deleted bucket is confirmed after the tenure, by the requests the
// node then makes as a follower.
func (s *store) renew(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	rev, err := s.kv.Update(ctx, key, value, rev)
	return rev, s.explainPermission(err)
}

// putCooldown records that nodeID stepped down, with a per-key TTL where
// the bucket allows one. It is informational: the cooldown itself is kept
// in the node's memory.
func (s *store) putCooldown(ctx context.Context, nodeID string, d time.Duration) error {
	key := cooldownKey(nodeID)
	value := []byte(fmt.Sprintf(`{"node_id":%q,"until":%q}`, nodeID, time.Now().Add(d).UTC().Format(time.RFC3339Nano)))
	ttl := d
	if ttl < time.Second {
		ttl = time.Second // the server's smallest per-message TTL
	}
	_ = s.kv.Purge(ctx, key)
	if _, err := s.kv.Create(ctx, key, value, jetstream.KeyTTL(ttl)); err == nil {
		return nil
	}
	_, err := s.kv.Put(ctx, key, value)
	return err
}

// watch follows the lease key: the current value first, then every change.
//
// jetstream binds the watch's subscription to the ctx it is created with
// (nats.go unsubscribes, from a goroutine of its own, when that ctx is
// done), so the watch gets a ctx of its own under life that lasts until
// the watch is stopped; only its creation is bounded, by timeout.
func (s *store) watch(life context.Context, timeout time.Duration) (*leaseWatch, error) {
	ctx, cancel := context.WithCancel(life)
	timer := time.AfterFunc(timeout, cancel)
	w, err := s.kv.Watch(ctx, leaseKey)
	if !timer.Stop() && err == nil {
		_ = w.Stop() // created, but the timeout had already cancelled it
		err = context.DeadlineExceeded
	}
	if err != nil {
		cancel()
		return nil, s.explain(err)
	}
	return &leaseWatch{KeyWatcher: w, cancel: cancel}, nil
}

// leaseWatch is a watch with the ctx it lives under.
type leaseWatch struct {
	jetstream.KeyWatcher
	cancel context.CancelFunc
}

// Stop ends the watch and the goroutine nats.go keeps waiting on its ctx.
// nats.go deletes the watch's consumer with a request that waits up to 5 s
// when the server does not answer, so Stop returns at once and leaves that
// to a goroutine counted in wg (the server removes an abandoned consumer on
// its own; closing the connection ends the request at once).
func (w *leaseWatch) Stop(wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = w.KeyWatcher.Stop()
		w.cancel()
	}()
}
