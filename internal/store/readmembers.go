package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// ReadMembers reads every member record under the key filter keys of
// bucket kv (wire.AccountMemberKeys in the account's bucket,
// wire.MemberKeys in a members bucket), in one watch of their last
// values. A key that holds no member record is logged to log (nil: not
// logged) and skipped.
func ReadMembers(ctx context.Context, kv jetstream.KeyValue, keys string, log *slog.Logger) ([]wire.MemberRecord, error) {
	w, err := kv.Watch(ctx, keys, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("read the members: %w", err)
	}
	defer func() { _ = w.Stop() }()
	var out []wire.MemberRecord
	for {
		select {
		case <-ctx.Done():
			return out, fmt.Errorf("read the members: %w", ctx.Err())
		case en, ok := <-w.Updates():
			if !ok {
				return out, fmt.Errorf("read the members: %w", nats.ErrConnectionClosed)
			}
			if en == nil {
				return out, nil
			}
			rec, err := wire.DecodeMemberRecord(en.Value())
			if err != nil {
				if log != nil {
					log.Warn("ignored a member key that is not a member record", "key", en.Key(), "error", err)
				}
				continue
			}
			out = append(out, rec)
		}
	}
}

// ReadClusterMembers reads every member record of cluster clusterID: under
// wire.AccountMemberKeys in the account's bucket, and under
// wire.MemberKeys in the members bucket of a cluster of protocol 3, each
// with one watch. A bucket that is not there holds none.
func ReadClusterMembers(ctx context.Context, js jetstream.JetStream, clusterID string, log *slog.Logger) ([]wire.MemberRecord, error) {
	var out []wire.MemberRecord
	for _, at := range []struct{ bucket, keys string }{
		{wire.AccountBucketName, wire.AccountMemberKeys(clusterID)},
		{wire.MembersBucketName(clusterID), wire.MemberKeys},
	} {
		kv, err := js.KeyValue(ctx, at.bucket)
		switch {
		case errors.Is(err, jetstream.ErrBucketNotFound):
			continue
		case err != nil:
			return out, fmt.Errorf("look up the members' bucket %q: %w", at.bucket, err)
		}
		records, err := ReadMembers(ctx, kv, at.keys, log)
		if err != nil {
			return out, err
		}
		out = append(out, records...)
	}
	return out, nil
}
