package store

// The account's bucket (wire.AccountBucketName): one for every cluster of
// a NATS account, holding what must outlive a cluster's election bucket
// (docs/design.md §2.6, §2.7): each cluster's TTL ceiling and its member
// records. A cluster whose election bucket is marked protocol 4 keeps
// them here; one marked 3 in its own members bucket (members.go).

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// AccountBucketConfig is the configuration the library creates the
// account's bucket with: wire.AccountBucketName, History 1 (only a key's
// latest value counts), no TTL (a crashed member's record stays, so that
// it shows as down), and opts' replicas, storage and placement, those of
// the first cluster to create it.
func AccountBucketConfig(opts Options) jetstream.KeyValueConfig {
	cfg := BucketConfig("", opts)
	return jetstream.KeyValueConfig{
		Bucket:      wire.AccountBucketName,
		Description: "go-cluster: every cluster's TTL ceiling and member records",
		History:     1,
		Replicas:    cfg.Replicas,
		Storage:     cfg.Storage,
		Placement:   cfg.Placement,
	}
}

// EnsureAccount opens the account's bucket, creating it with
// AccountBucketConfig when absent; created says which. A bucket with a TTL
// is refused (wire.ErrBucketConfig): its ceilings would age out. It needs
// the permissions to look up and create it ($JS.API.STREAM.INFO and
// $JS.API.STREAM.CREATE of the stream KV_go-cluster, under js's prefix).
func EnsureAccount(ctx context.Context, js jetstream.JetStream, opts Options) (kv jetstream.KeyValue, created bool, err error) {
	kv, created, err = openOrCreate(ctx, js, AccountBucketConfig(opts), createKV)
	if err != nil {
		return nil, false, err
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("bucket %q status: %w", wire.AccountBucketName, err)
	}
	if st.TTL() != 0 {
		return nil, false, fmt.Errorf("%w: %w: bucket %q has a TTL (%v): the clusters' TTL ceilings in it would age out (docs/design.md §2.7); make it again without one",
			wire.ErrBucketConfig, wire.ErrInvalidConfig, wire.AccountBucketName, st.TTL())
	}
	return kv, created, nil
}

// ErrCeiling says a cluster's TTL ceiling in the account's bucket is not a
// number of milliseconds in (0, 24h]: written by something else than
// go-cluster. go-cluster init --lease-ttl writes it again.
var ErrCeiling = errors.New("the cluster's TTL ceiling is not a number of milliseconds")

// parseCeiling reads a ceiling key's value. An empty one is a delete or
// purge marker: the ceiling was taken away, which is refused as garbage is,
// not read as none (no Start writes over a marker; init does).
func parseCeiling(data []byte) (time.Duration, error) {
	if len(data) == 0 {
		return 0, fmt.Errorf("%w: the key was deleted or purged", ErrCeiling)
	}
	n, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil || n <= 0 || n > wire.MaxLeaseTTL.Milliseconds() {
		return 0, fmt.Errorf("%w: %q", ErrCeiling, data)
	}
	return time.Duration(n) * time.Millisecond, nil
}

func formatCeiling(ttl time.Duration) []byte {
	return []byte(strconv.FormatInt(ttl.Milliseconds(), 10))
}

// Ceiling is cluster clusterID's TTL ceiling in the account's bucket kv:
// 0 and an error wrapping ErrCeiling when the key holds none.
func Ceiling(ctx context.Context, kv jetstream.KeyValue, clusterID string) (time.Duration, error) {
	e, err := kv.Get(ctx, wire.CeilingKey(clusterID))
	if err != nil {
		return 0, err
	}
	return parseCeiling(e.Value())
}

// CreateCeiling writes cluster clusterID's TTL ceiling, ttl (0:
// wire.DefaultLeaseTTL), into the account's bucket if the key was never
// written: a campaigning node's Start sets it from its LeaseTTL as the
// first, later ones leave it. One publish, checked on the key's sequence
// 0 (not KV Create, which reads the key when it exists): it needs only
// the key's own subject. A key that exists is no error.
func CreateCeiling(ctx context.Context, js jetstream.JetStream, api API, clusterID string, ttl time.Duration) error {
	key := wire.CeilingKey(clusterID)
	msg := &nats.Msg{Subject: api.PublishSubject(wire.KVSubject(wire.AccountBucketName, key)), Data: formatCeiling(cmp.Or(ttl, wire.DefaultLeaseTTL)), Header: nats.Header{}}
	msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	if _, err := js.PublishMsg(ctx, msg); err != nil && Classify(err) != election.Conflict {
		return fmt.Errorf("the cluster's TTL ceiling (%s in bucket %q): %w", key, wire.AccountBucketName, err)
	}
	return nil
}

// RaiseCeiling raises cluster clusterID's TTL ceiling in the account's
// bucket kv to at least ttl, by compare-and-swap: two raises at once both
// hold, and the ceiling never goes down (docs/design.md §2.7). A value
// that is no ceiling is written over. It returns the ceiling before and
// after.
func RaiseCeiling(ctx context.Context, kv jetstream.KeyValue, clusterID string, ttl time.Duration) (before, after time.Duration, err error) {
	if ttl <= 0 || ttl > wire.MaxLeaseTTL || ttl%time.Millisecond != 0 {
		return 0, 0, fmt.Errorf("%w: a ceiling of %v: whole milliseconds in (0, %v]", wire.ErrInvalidConfig, ttl, wire.MaxLeaseTTL)
	}
	key := wire.CeilingKey(clusterID)
	for attempt := 1; ; attempt++ {
		e, err := kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
			_, err = kv.Create(ctx, key, formatCeiling(ttl))
		case err != nil:
		default:
			before, _ = parseCeiling(e.Value())
			if before >= ttl {
				return before, before, nil
			}
			_, err = kv.Update(ctx, key, formatCeiling(ttl), e.Revision())
		}
		switch {
		case err == nil:
			return before, ttl, nil
		case Classify(err) == election.Conflict && ctx.Err() == nil:
			// Raced with another writer, or read a replica behind: read
			// again, a little later each time.
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(min(attempt, 20)) * 10 * time.Millisecond):
			}
			continue
		default:
			return before, 0, fmt.Errorf("raise the cluster's TTL ceiling (%s in bucket %q): %w", key, wire.AccountBucketName, err)
		}
	}
}

// accountCeiling is the cluster's TTL ceiling in the account's bucket,
// read from the stream's leader (a last-by-subject STREAM.MSG.GET, not a
// direct get, which a replica behind may answer with an older, lower
// value); 0 when the bucket or the key is absent; an error when it cannot
// be read (then wire.ErrPermissionDenied if this connection was refused
// the subject) or holds no ceiling.
func (s *Store) accountCeiling(ctx context.Context) (time.Duration, error) {
	subject := s.api.Prefix() + "STREAM.MSG.GET." + wire.KVStream(wire.AccountBucketName)
	key := wire.KVSubject(wire.AccountBucketName, wire.CeilingKey(s.clusterID))
	req, _ := json.Marshal(struct {
		LastBySubject string `json:"last_by_subj"`
	}{key})
	msg, err := s.nc.RequestWithContext(ctx, subject, req)
	if err != nil {
		return 0, ceilingError(s.nc, subject, err)
	}
	var reply struct {
		Error   *jetstream.APIError `json:"error"`
		Message struct {
			Data []byte `json:"data"`
		} `json:"message"`
	}
	switch err := json.Unmarshal(msg.Data, &reply); {
	case err != nil:
		return 0, fmt.Errorf("the cluster's TTL ceiling (%s): %w", key, err)
	case reply.Error != nil && (reply.Error.ErrorCode == jetstream.JSErrCodeStreamNotFound || reply.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound):
		return 0, nil
	case reply.Error != nil:
		return 0, fmt.Errorf("the cluster's TTL ceiling (%s): %w", key, reply.Error)
	}
	ttl, err := parseCeiling(reply.Message.Data)
	if err != nil {
		return 0, fmt.Errorf("%s in bucket %q: %w (go-cluster init --lease-ttl writes it again)", wire.CeilingKey(s.clusterID), wire.AccountBucketName, err)
	}
	return ttl, nil
}

// ceilingError is the error of a request for the cluster's ceiling that
// got no answer: wire.ErrPermissionDenied when this connection was
// refused its subject.
func ceilingError(nc *nats.Conn, subject string, err error) error {
	if last := nc.LastError(); last != nil && errors.Is(last, nats.ErrPermissionViolation) && strings.Contains(last.Error(), `"`+subject+`"`) {
		return fmt.Errorf("%w: the cluster's TTL ceiling: %s is refused, and a campaigning node needs it (docs/production.md): %w", wire.ErrPermissionDenied, subject, err)
	}
	return fmt.Errorf("the cluster's TTL ceiling (%s): %w", subject, err)
}
