// Package store is the election's one real backend: the cluster's KV
// bucket on NATS JetStream. It opens the bucket, writes the lease with
// compare-and-swap, watches it, reads the stream's info and tells a
// permanent error from a passing one. It returns facts and decides
// nothing: the election machine (internal/election) decides, the driver
// (package cluster) carries out.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Store is the one real backend of the election: the cluster's KV bucket.
// Every write to the lease is a compare-and-swap on the KV revision.
type Store struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	api    API // the JetStream API js uses: subjects of raw requests and publishes
	kv     jetstream.KeyValue
	bucket string
	// clusterID names the members bucket and keys of the account's
	// bucket too, whose permission violations are not the election's
	// (isMembersViolation).
	clusterID string
	// lookupTimeout bounds the bucket lookup that confirms a deletion.
	lookupTimeout time.Duration
	// metadata is the bucket's stream metadata when it was opened, and
	// firstSeq its stream's first_seq.
	metadata map[string]string
	firstSeq uint64
	// ceiling: Confirm reads the cluster's ceiling too, for a
	// node that campaigns, and the members' versions for one that speaks
	// more than wire.Protocol (ReadCeiling).
	ceiling    bool
	protocolHi int
	// membersBucket: the cluster has or had a members bucket of protocol
	// 3 (FindMembersBucket), whose ceiling every Confirm reads too.
	membersBucket bool
	// watchHeartbeat is the lease watch's heartbeat (PaceWatch); zero:
	// watchHeartbeat. Tests shorten it.
	watchHeartbeat time.Duration
}

// ReadCeiling makes every Confirm read the cluster's TTL ceiling as well,
// in parallel (clusterCeiling): a campaigning node's tenures and waits
// need it (docs/design.md §2.7); an observer's do not. A node that
// speaks protocol versions above wire.Protocol, up to hi, reads the member
// records too: the versions every member speaks (§5.9, P16). Call it
// before the store is shared.
func (s *Store) ReadCeiling(hi int) { s.ceiling, s.protocolHi = true, hi }

// Conn is the connection the store uses.
func (s *Store) Conn() *nats.Conn { return s.nc }

// JetStream is the JetStream API the store uses.
func (s *Store) JetStream() jetstream.JetStream { return s.js }

// API says which JetStream API the store reaches (domain or prefix).
func (s *Store) API() API { return s.api }

// KV is the bucket.
func (s *Store) KV() jetstream.KeyValue { return s.kv }

// Bucket is the bucket's name.
func (s *Store) Bucket() string { return s.bucket }

// Open binds to the bucket, creating it when absent with opts
// (Ensure). An existing bucket is used as it is.
func Open(ctx context.Context, nc *nats.Conn, api API, clusterID string, opts Options, lookupTimeout time.Duration) (*Store, error) {
	js, err := api.Open(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	s := &Store{nc: nc, js: js, api: api, bucket: wire.BucketName(clusterID), clusterID: clusterID, lookupTimeout: lookupTimeout}
	kv, status, _, err := Ensure(ctx, js, clusterID, opts)
	if errors.Is(err, nats.ErrNoResponders) {
		// Nobody serves the stream API: a server (or account) without
		// JetStream, or one still starting. The account info tells.
		if _, aerr := js.AccountInfo(ctx); errors.Is(aerr, jetstream.ErrJetStreamNotEnabled) || errors.Is(aerr, jetstream.ErrJetStreamNotEnabledForAccount) {
			err = fmt.Errorf("open bucket %q: %w", s.bucket, aerr)
		}
	}
	if err != nil {
		// Not explain: at start a missing bucket was never there to be deleted.
		return nil, s.ExplainPermission(ExplainJetStream(err))
	}
	s.kv = kv
	s.metadata = status.Metadata()
	if bs, ok := status.(*jetstream.KeyValueBucketStatus); ok {
		s.firstSeq = bs.StreamInfo().Config.FirstSeq
	}
	return s, nil
}

// Campaignable refuses a bucket a campaigning node cannot share with the
// nodes already there: one marked for a protocol version this node does
// not speak, or whose lease record is of an older one (docs/production.md
// says how to move a cluster; a newer record the node follows, P16), or
// one that keeps no
// LeaseTTL. It returns the bucket's metadata. An observer, which writes
// nothing, needs none of it.
func (s *Store) Campaignable(ctx context.Context) (bucketmeta.Meta, error) {
	meta, err := bucketmeta.Parse(s.metadata)
	if err != nil {
		return meta, fmt.Errorf("%w: %w: bucket %q: %w", wire.ErrBucketConfig, wire.ErrInvalidConfig, s.bucket, err)
	}
	if meta.LeaseTTL == 0 {
		// Without it nodes configured with different TTLs could each wait
		// only their own (I2 in docs/design.md).
		return meta, fmt.Errorf("%w: %w: bucket %q has no %s metadata, the cluster's one LeaseTTL: run go-cluster init --lease-ttl on it (or init --upgrade on a bucket of protocol 1)",
			wire.ErrBucketConfig, wire.ErrInvalidConfig, s.bucket, bucketmeta.KeyLeaseTTL)
	}
	if meta.Protocol != 0 && (meta.Protocol < wire.Protocol || meta.Protocol > wire.BucketProtocolHi(s.hi())) {
		return meta, fmt.Errorf("%w: bucket %q is marked for protocol %d, this node uses buckets of protocols %d to %d",
			wire.ErrProtocolVersion, s.bucket, meta.Protocol, wire.Protocol, wire.BucketProtocolHi(s.hi()))
	}
	if s.firstSeq <= 1 && meta.EpochBase == 0 {
		// Its revisions may be those of a bucket deleted before it, its
		// epochs below theirs (docs/design.md §2.1).
		return meta, fmt.Errorf("%w: %w: bucket %q has neither a first_seq nor a %s: made by another tool? run go-cluster init --rebase on it (or let go-cluster init or a node create it)",
			wire.ErrBucketConfig, wire.ErrInvalidConfig, s.bucket, bucketmeta.KeyEpochBase)
	}
	e, err := s.kv.Get(ctx, wire.LeaseKey)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return meta, nil
	case err != nil:
		return meta, s.Explain(err)
	}
	// A record of a version above this node's is no reason to refuse:
	// the node follows it, not ready (P16).
	if l, derr := wire.DecodeLease(e.Value(), e.Revision()); derr == nil && l.Version < wire.Protocol {
		return meta, fmt.Errorf("%w: the lease record of bucket %q was written by protocol %d (revision %d), this node speaks protocols %d to %d",
			wire.ErrProtocolVersion, s.bucket, max(l.Version, 1), e.Revision(), wire.Protocol, s.hi())
	}
	return meta, nil
}

// hi is the highest protocol version the node speaks (ReadCeiling).
func (s *Store) hi() int { return max(s.protocolHi, wire.ProtocolHi) }

// Explain turns errors that hide a permanent cause into wire.ErrBucketDeleted or
// wire.ErrPermissionDenied. The server reports a publish permission violation
// asynchronously, so a request merely times out; the connection's last error
// tells why. A deleted bucket shows as "stream not found", no responders, or
// (jetstream publish retries on no responders) a timeout on a live
// connection: a bucket lookup tells for sure.
func (s *Store) Explain(err error) error {
	if err == nil {
		return nil
	}
	err = Tidy(err)
	if perm := s.ExplainPermission(err); perm != err {
		return perm
	}
	suspect := errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) ||
		errors.Is(err, nats.ErrStreamNotFound) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrNoResponders) ||
		(errors.Is(err, context.DeadlineExceeded) && s.nc.IsConnected())
	if suspect && s.bucketGone() {
		return fmt.Errorf("%w: %w", wire.ErrBucketDeleted, err)
	}
	return err
}

// ExplainPermission wraps err with wire.ErrPermissionDenied when the server has
// refused this connection a subject the node uses: one naming the bucket
// (KV writes, the stream's API), or the account info request while the
// bucket is opened. Any other violation may be the application's, on a
// shared connection, or the member record's (best effort): not ours.
func (s *Store) ExplainPermission(err error) error {
	if err == nil {
		return nil
	}
	last := s.nc.LastError()
	if last == nil || !errors.Is(last, nats.ErrPermissionViolation) {
		return err
	}
	msg := last.Error()
	api := s.api.Prefix()
	if strings.Contains(msg, api+"CONSUMER.DELETE.") {
		return err // deleting a dropped watch's consumer is best effort: the server removes it when idle
	}
	if isMembersViolation(msg, s.clusterID) {
		return err // the member record is best effort (members.go)
	}
	// The account info is read only while opening the bucket (s.kv is
	// then nil): refused later, it was the account bucket's creation's.
	if strings.Contains(msg, s.bucket) || (s.kv == nil && strings.Contains(msg, `"`+api+`INFO"`)) {
		return fmt.Errorf("%w: %w (%v)", wire.ErrPermissionDenied, err, last)
	}
	return err
}

// isMembersViolation says a permission violation's text names the
// members bucket of clusterID or the account's bucket: their subjects or
// their streams' API. (A Confirm that cannot read the ceiling there says
// so itself: ceilingError.)
func isMembersViolation(msg, clusterID string) bool {
	for _, bucket := range []string{wire.MembersBucketName(clusterID), wire.AccountBucketName} {
		if strings.Contains(msg, wire.KVSubject(bucket, "")) || strings.Contains(msg, "."+wire.KVStream(bucket)+`"`) {
			return true
		}
	}
	return false
}

// bucketGone asks the server whether the bucket still exists.
func (s *Store) bucketGone() bool {
	ctx, cancel := context.WithTimeout(context.Background(), s.lookupTimeout)
	defer cancel()
	_, err := s.js.KeyValue(ctx, s.bucket)
	return errors.Is(err, jetstream.ErrBucketNotFound)
}

// Create writes value under key only if the key has no entry at all and
// the stream's last sequence is lastSeq (C3 in docs/design.md): nothing
// was written anywhere in the bucket since the node saw the key absent.
// Not KV Create, which also writes over a delete or purge marker: a
// marker is a value, written over only by a CAS on its revision.
func (s *Store) Create(ctx context.Context, key string, value []byte, lastSeq uint64) (uint64, error) {
	msg := &nats.Msg{Subject: s.api.PublishSubject(wire.KVSubject(s.bucket, key)), Data: value, Header: nats.Header{}}
	msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	msg.Header.Set(jetstream.ExpectedLastSeqHeader, strconv.FormatUint(lastSeq, 10))
	ack, err := s.js.PublishMsg(ctx, msg)
	if err != nil {
		return 0, s.Explain(err)
	}
	return ack.Sequence, nil
}

// Confirm reads the bucket's stream info (C4): the incarnation, its
// metadata, its last sequence and its age on the server's clock; and,
// after ReadCeiling, at the same time, the cluster's ceiling that a
// re-create of this bucket does not lose (I2, clusterCeiling). A ceiling
// that cannot be read fails the Confirm: a wait without it could fall
// short (§2.7); zero only when none is kept. Each request is decoded only
// as far as the election reads it.
func (s *Store) Confirm(ctx context.Context) (election.Incarnation, error) {
	if !s.ceiling {
		return s.confirm(ctx)
	}
	type read struct {
		ttl   time.Duration
		speak int
		err   error
	}
	members := make(chan read, 1)
	go func() {
		var r read
		r.ttl, r.err = s.clusterCeiling(ctx)
		if r.err == nil && s.protocolHi > wire.Protocol {
			r.speak, r.err = s.membersSpeak(ctx)
		}
		members <- r
	}()
	inc, err := s.confirm(ctx)
	m := <-members
	switch {
	case err != nil:
		return inc, err
	case m.err != nil:
		return election.Incarnation{}, m.err
	}
	inc.ClusterMaxTTL, inc.MembersSpeak = m.ttl, m.speak
	return inc, nil
}

// FindMembersBucket says whether the cluster has a members bucket of
// protocol 3 to read the ceiling from as well: when its bucket is marked 3
// (or unmarked), or when one exists beside a bucket marked 4 (made again
// by this build over a cluster of protocol 3). A cluster that never had
// one is not asked for it again: the answer that a stream does not exist
// comes from the meta leader alone, which every takeover would then
// wait for. Call it after Open, before the store is shared.
func (s *Store) FindMembersBucket(ctx context.Context) error {
	if s.KeepsMembersBucket() {
		s.membersBucket = true
		return nil
	}
	ttl, err := s.membersBucketCeiling(ctx)
	if err != nil {
		return err
	}
	s.membersBucket = ttl > 0
	return nil
}

// clusterCeiling is the cluster's TTL ceiling: the largest of its key in
// the account's bucket and, for a cluster that has a members bucket of
// protocol 3 (FindMembersBucket), that bucket's lease_ttl_max, both read
// at once. Each is only ever raised; a node reads both whatever its
// bucket's mark, so that a bucket created again with the other mark loses
// neither (§2.7).
func (s *Store) clusterCeiling(ctx context.Context) (time.Duration, error) {
	if !s.membersBucket {
		return s.accountCeiling(ctx)
	}
	type read struct {
		ttl time.Duration
		err error
	}
	members := make(chan read, 1)
	go func() {
		var r read
		r.ttl, r.err = s.membersBucketCeiling(ctx)
		members <- r
	}()
	account, err := s.accountCeiling(ctx)
	m := <-members
	if err := errors.Join(err, m.err); err != nil {
		return 0, err
	}
	return max(account, m.ttl), nil
}

// membersBucketCeiling is the members bucket's lease_ttl_max; 0 when
// there is no members bucket; an error when its stream info cannot be
// read (no answer, an API error, or this connection refused it: then
// wire.ErrPermissionDenied).
func (s *Store) membersBucketCeiling(ctx context.Context) (time.Duration, error) {
	subject := s.api.Prefix() + "STREAM.INFO." + wire.KVStream(wire.MembersBucketName(s.clusterID))
	msg, err := s.nc.RequestWithContext(ctx, subject, nil)
	if err != nil {
		return 0, ceilingError(s.nc, subject, err)
	}
	var info struct {
		Error  *jetstream.APIError `json:"error"`
		Config struct {
			Metadata map[string]string `json:"metadata"`
		} `json:"config"`
	}
	switch err := json.Unmarshal(msg.Data, &info); {
	case err != nil:
		return 0, fmt.Errorf("the cluster's TTL ceiling (%s): %w", subject, err)
	case info.Error != nil && info.Error.ErrorCode == jetstream.JSErrCodeStreamNotFound:
		return 0, nil // no members bucket: no ceiling kept there
	case info.Error != nil:
		return 0, fmt.Errorf("the cluster's TTL ceiling (%s): %w", subject, info.Error)
	}
	meta, _ := bucketmeta.Parse(info.Config.Metadata)
	return meta.MaxTTL, nil
}

// membersSpeak is the highest protocol version every member record
// names (docs/design.md §5.9), in the account's bucket and in the
// members bucket where there is one; 0 when there is none; an error when
// they cannot be read, as for the ceiling: a takeover would write a
// version it does not know every member reads.
func (s *Store) membersSpeak(ctx context.Context) (int, error) {
	records, err := ReadClusterMembers(ctx, s.js, s.clusterID, nil)
	if err != nil {
		return 0, fmt.Errorf("the members' protocol versions: %w", err)
	}
	speak := 0
	for _, r := range records {
		if v := r.Speaks(); speak == 0 || v < speak {
			speak = v
		}
	}
	return speak, nil
}

func (s *Store) confirm(ctx context.Context) (election.Incarnation, error) {
	msg, err := s.nc.RequestWithContext(ctx, s.api.Prefix()+"STREAM.INFO."+wire.KVStream(s.bucket), nil)
	if err != nil {
		// Unanswered: the stream of a deleted bucket is answered for (not
		// found, below), so a lookup would tell nothing more, and cost a
		// server too busy to answer one more request.
		return election.Incarnation{}, s.ExplainPermission(Tidy(err))
	}
	var info struct {
		Error   *jetstream.APIError `json:"error"`
		Created time.Time           `json:"created"`
		Config  struct {
			FirstSeq uint64            `json:"first_seq"`
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
			return election.Incarnation{}, s.Explain(jetstream.ErrStreamNotFound)
		}
		return election.Incarnation{}, s.Explain(e)
	}
	meta, err := bucketmeta.Parse(info.Config.Metadata)
	if err != nil {
		return election.Incarnation{}, fmt.Errorf("%w: %w: bucket %q: %w", wire.ErrBucketConfig, wire.ErrInvalidConfig, s.bucket, err)
	}
	inc := election.Incarnation{Created: info.Created, FirstSeq: info.Config.FirstSeq, EpochBase: meta.EpochBase, Protocol: meta.Protocol,
		LeaseTTL: meta.LeaseTTL, MaxTTL: meta.MaxTTL, LastSeq: info.State.LastSeq}
	if !info.Created.IsZero() && !info.TimeStamp.IsZero() {
		inc.Age = max(info.TimeStamp.Sub(info.Created), 0)
	}
	return inc, nil
}

// Update writes value under key only if its latest revision is rev.
func (s *Store) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	rev, err := s.kv.Update(ctx, key, value, rev)
	return rev, s.Explain(err)
}

// Renew is Update for the leader's renewals. A renewal runs against the
// tenure deadline, so it never spends time on the bucket lookup that tells
// a deleted bucket from a slow one: the leader retries until its deadline,
// and a deleted bucket is confirmed after the tenure, by the requests the
// node then makes as a follower.
func (s *Store) Renew(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	rev, err := s.kv.Update(ctx, key, value, rev)
	return rev, s.ExplainPermission(err)
}

// PutCooldown records that nodeID stepped down, with a per-key TTL where
// the bucket allows one. It is informational: the cooldown itself is kept
// in the node's memory.
func (s *Store) PutCooldown(ctx context.Context, nodeID string, d time.Duration) error {
	key := wire.CooldownKey(nodeID)
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

// MetadataMaxTTL is the largest TTL the bucket's metadata names, as
// opened: its lease_ttl or lease_ttl_max.
func (s *Store) MetadataMaxTTL() time.Duration {
	meta, _ := bucketmeta.Parse(s.metadata)
	return max(meta.LeaseTTL, meta.MaxTTL)
}

// KeepsMembersBucket says the bucket, as opened, is marked for a protocol
// below wire.BucketProtocol, or unmarked: its cluster keeps its ceiling
// and member records in a members bucket of its own, not in the
// account's.
func (s *Store) KeepsMembersBucket() bool {
	meta, _ := bucketmeta.Parse(s.metadata)
	return meta.Protocol < wire.BucketProtocol
}
