package wire

import "fmt"

// MaxIdentifierLen is the longest ClusterID accepted (CheckIdentifier).
const MaxIdentifierLen = 64

// MaxNodeIDLen is the longest NodeID accepted (CheckNodeID): the longest
// DNS name, 253 bytes without a trailing dot (RFC 1035), so that a fully
// qualified host name fits.
const MaxNodeIDLen = 253

// CheckIdentifier checks that value can be used as a ClusterID. A
// ClusterID becomes a NATS subject token and the KV bucket name
// "cluster-<ClusterID>", and bucket names allow no '.', so only ASCII
// letters, digits, '-' and '_' are allowed, 1 to MaxIdentifierLen bytes.
// NodeIDs follow the wider rules of CheckNodeID. The returned error
// wraps ErrInvalidConfig and names field.
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

// CheckNodeID checks that value can be used as a NodeID: what host
// names contain, so that a node can be named after its host
// ("db1.example.com"). A NodeID is one or more labels separated by single
// dots; a label is one or more ASCII letters, digits, '-' or '_'. No
// leading, trailing or doubled dot, at most MaxNodeIDLen bytes. Every
// NodeID valid before dots were allowed (CheckIdentifier) is still
// valid. NodeIDs are compared byte for byte: "DB1" and "db1" are two nodes.
//
// A NodeID goes into NATS subjects and KV keys as NodeIDToken(value),
// never as it is, since a dot would split a subject token in two. The
// returned error wraps ErrInvalidConfig and names field.
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
