package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/election"
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
	// created is the bucket stream's creation time: its identity. A bucket
	// deleted and created again has a new one, while revisions restart at
	// 1 and cannot tell the two apart. Only the election loop reads or
	// changes it after openStore.
	created time.Time
	// lastSeqAtOpen is the stream's last sequence when opened: at least
	// the revision of every entry written before.
	lastSeqAtOpen uint64
	// ageAtOpen is how old the stream was when opened, on the server's
	// own clock (the time of the reply less the creation time): one clock,
	// so only its rate matters. Zero when unknown.
	ageAtOpen time.Duration
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
	s.created = streamCreated(status)
	if bs, ok := status.(*jetstream.KeyValueBucketStatus); ok {
		info := bs.StreamInfo()
		s.lastSeqAtOpen = info.State.LastSeq
		if !info.Created.IsZero() && !info.TimeStamp.IsZero() {
			s.ageAtOpen = max(info.TimeStamp.Sub(info.Created), 0)
		}
	}
	return s, nil
}

// explainJetStream names a server (or account) without JetStream, which
// otherwise shows only as a lookup that fails or times out.
func explainJetStream(err error) error {
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		return fmt.Errorf("%w: %w: JetStream is not enabled on the server or for this account", ErrNoJetStream, err)
	}
	return err
}

// streamCreated is the creation time of the bucket's stream, zero when the
// status does not carry it.
func streamCreated(status jetstream.KeyValueStatus) time.Time {
	if bs, ok := status.(*jetstream.KeyValueBucketStatus); ok {
		return bs.StreamInfo().Created
	}
	return time.Time{}
}

// incarnation reads the bucket's identity and its stream's last sequence.
// recreated reports a stream other than the one this node knew (deleted
// and created again); the store then knows the new one. lastSeq is at
// least the revision of every entry of the bucket: an epoch floor; created
// is the bucket's creation time, its epochs' base (rule 50).
func (s *store) incarnation(ctx context.Context) (recreated bool, lastSeq uint64, created time.Time, err error) {
	status, err := s.kv.Status(ctx)
	if err != nil {
		return false, 0, time.Time{}, s.explain(err)
	}
	if bs, ok := status.(*jetstream.KeyValueBucketStatus); ok {
		lastSeq = bs.StreamInfo().State.LastSeq
	}
	created = streamCreated(status)
	if created.IsZero() || created.Equal(s.created) {
		return false, lastSeq, created, nil
	}
	s.created = created
	return true, lastSeq, created, nil
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
		errors.Is(err, ErrNoJetStream), errors.Is(err, ErrEpochExhausted), errors.Is(err, nats.ErrConnectionClosed):
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
	if strings.Contains(msg, "$JS.EVENT.ADVISORY.") {
		return err // the bucket advisories are best effort (advisory.go)
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

// create writes value under key only if the key has no entry at all. Not
// KV Create, which also writes over a delete or purge marker: a marker
// counts as present here (docs/design.md §5.2), and is written over only
// by a CAS on its revision.
func (s *store) create(ctx context.Context, key string, value []byte) (uint64, error) {
	rev, err := s.kv.Update(ctx, key, value, 0)
	return rev, s.explain(err)
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

// get reads key. The read may come from a replica and be stale: it is a
// hint, never proof of leadership.
func (s *store) get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, err
	}
	return e, s.explain(err)
}

// history returns every revision of key the bucket keeps (its History),
// oldest first; none when the key is absent. Like watch, it stops its
// consumer in the background (counted in wg): a request nats.go bounds only
// by a fixed 5 s must not hold up the election loop.
func (s *store) history(ctx context.Context, key string, wg *sync.WaitGroup) ([]jetstream.KeyValueEntry, error) {
	wctx, cancel := context.WithCancel(ctx)
	w, err := s.kv.Watch(wctx, key, jetstream.IncludeHistory())
	if err != nil {
		cancel()
		return nil, s.explain(err)
	}
	defer (&leaseWatch{KeyWatcher: w, cancel: cancel}).Stop(wg)
	var out []jetstream.KeyValueEntry
	for {
		select {
		case ent, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("read %s history: watch closed", key)
			}
			if ent == nil {
				return out, nil
			}
			out = append(out, ent)
		case <-ctx.Done():
			return nil, fmt.Errorf("read %s history: %w", key, ctx.Err())
		}
	}
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
