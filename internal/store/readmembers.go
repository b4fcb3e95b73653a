package store

import (
	"context"
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
