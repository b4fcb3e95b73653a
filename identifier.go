package cluster

import (
	"fmt"
)

// MaxIdentifierLen is the longest ClusterID or NodeID accepted.
const MaxIdentifierLen = 64

// ValidateIdentifier checks that value can be used as a ClusterID or NodeID.
// Identifiers become NATS subject tokens, KV bucket names and KV keys, so
// only ASCII letters, digits, '-' and '_' are allowed, 1 to MaxIdentifierLen
// bytes. The returned error wraps ErrInvalidConfig and names field.
func ValidateIdentifier(field, value string) error {
	if value == "" {
		return fmt.Errorf("%w: %s is required", ErrInvalidConfig, field)
	}
	if len(value) > MaxIdentifierLen {
		return fmt.Errorf("%w: %s is %d bytes long, at most %d allowed", ErrInvalidConfig, field, len(value), MaxIdentifierLen)
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return fmt.Errorf("%w: %s %q has character %q at byte %d; only letters, digits, '-' and '_' are allowed", ErrInvalidConfig, field, value, c, i)
		}
	}
	return nil
}
