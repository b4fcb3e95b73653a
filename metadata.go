package cluster

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// maxMetadataSize is the largest Config.Metadata accepted, in bytes of
// its JSON: the lease record must stay well under wire.MaxLeaseSize (4 KiB).
const maxMetadataSize = 1024

// validateMetadata checks Config.Metadata; the error wraps ErrInvalidConfig
// and names the field and the key.
func validateMetadata(md map[string]string) error {
	for k := range md {
		if err := validateMetadataKey(k); err != nil {
			return err
		}
	}
	data, err := json.Marshal(md)
	if err != nil {
		return fmt.Errorf("%w: Metadata: %w", ErrInvalidConfig, err)
	}
	if len(data) > maxMetadataSize {
		return fmt.Errorf("%w: Metadata is %d bytes as JSON, at most %d", ErrInvalidConfig, len(data), maxMetadataSize)
	}
	return nil
}

// validateMetadataKey checks one Metadata key: letters, digits, '-', '_'
// and '.', 1 to wire.MaxIdentifierLen bytes.
func validateMetadataKey(k string) error {
	if len(k) == 0 || len(k) > wire.MaxIdentifierLen {
		return fmt.Errorf("%w: Metadata key %q must be 1 to %d bytes", ErrInvalidConfig, k, wire.MaxIdentifierLen)
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("%w: Metadata key %q has character %q; only letters, digits, '-', '_' and '.' are allowed", ErrInvalidConfig, k, c)
		}
	}
	return nil
}

// SetMetadata replaces what this node publishes as its metadata (etcd's
// Proclaim): the leader writes it with a renewal made at once, without a
// new election or a new epoch, and followers, observers and Lease see
// it when that renewal lands; a follower publishes it when it next leads.
// md follows Config.Metadata's rules (an error wraps ErrInvalidConfig);
// nil or empty publishes none. It returns once the node has taken it,
// ErrNotStarted or ErrStopped when it cannot, and an error wrapping
// ErrNotLeader on an observer, which publishes nothing. Config keeps the metadata
// NewNode was given.
func (n *Node) SetMetadata(ctx context.Context, md map[string]string) error {
	if err := validateMetadata(md); err != nil {
		return fmt.Errorf("set metadata: %w", err)
	}
	if err := n.eng.SetMetadata(ctx, md); err != nil {
		return fmt.Errorf("set metadata: %w", err)
	}
	return nil
}
