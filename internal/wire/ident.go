package wire

import "fmt"

// MaxIdentifierLen and MaxNodeIDLen are cluster's limits of the same
// names.
const (
	MaxIdentifierLen = 64
	MaxNodeIDLen     = 253
)

// CheckIdentifier is cluster.ValidateIdentifier: ASCII letters, digits,
// '-' and '_', 1 to MaxIdentifierLen bytes. The error wraps
// ErrInvalidConfig and names field.
func CheckIdentifier(field, value string) error {
	if value == "" {
		return fmt.Errorf("%w: %s is required", ErrInvalidConfig, field)
	}
	if len(value) > MaxIdentifierLen {
		return fmt.Errorf("%w: %s is %d bytes long, at most %d allowed", ErrInvalidConfig, field, len(value), MaxIdentifierLen)
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; !isLabelByte(c) {
			return fmt.Errorf("%w: %s %q has character %q at byte %d; only letters, digits, '-' and '_' are allowed", ErrInvalidConfig, field, value, c, i)
		}
	}
	return nil
}

// CheckNodeID is cluster.ValidateNodeID: labels of CheckIdentifier's
// bytes separated by single dots, at most MaxNodeIDLen bytes. The error
// wraps ErrInvalidConfig and names field.
func CheckNodeID(field, value string) error {
	if value == "" {
		return fmt.Errorf("%w: %s is required", ErrInvalidConfig, field)
	}
	if len(value) > MaxNodeIDLen {
		return fmt.Errorf("%w: %s is %d bytes long, at most %d allowed", ErrInvalidConfig, field, len(value), MaxNodeIDLen)
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case isLabelByte(c):
		case c == '.' && (i == 0 || i == len(value)-1 || value[i-1] == '.'):
			return fmt.Errorf("%w: %s %q has an empty label at byte %d; dots only go between labels", ErrInvalidConfig, field, value, i)
		case c == '.':
		default:
			return fmt.Errorf("%w: %s %q has character %q at byte %d; only letters, digits, '-', '_' and '.' between labels are allowed", ErrInvalidConfig, field, value, c, i)
		}
	}
	return nil
}

// isLabelByte reports whether c may appear in a ClusterID or in a label of
// a NodeID.
func isLabelByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}
