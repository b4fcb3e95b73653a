package cluster

import (
	"fmt"
	"strings"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// MaxIdentifierLen is the longest ClusterID accepted (ValidateIdentifier).
const MaxIdentifierLen = 64

// MaxNodeIDLen is the longest NodeID accepted (ValidateNodeID): the
// longest DNS name, 253 bytes without a trailing dot (RFC 1035), so that a
// fully qualified host name fits.
const MaxNodeIDLen = 253

// ValidateIdentifier checks that value can be used as a ClusterID. A
// ClusterID becomes a NATS subject token and the KV bucket name
// "cluster-<ClusterID>", and bucket names allow no '.', so only ASCII
// letters, digits, '-' and '_' are allowed, 1 to MaxIdentifierLen bytes.
// NodeIDs follow the wider rules of ValidateNodeID. The returned error
// wraps ErrInvalidConfig and names field.
func ValidateIdentifier(field, value string) error {
	return wire.CheckIdentifier(field, value)
}

// ValidateNodeID checks that value can be used as a NodeID: what host
// names contain, so that a node can be named after its host
// ("db1.example.com"). A NodeID is one or more labels separated by single
// dots; a label is one or more ASCII letters, digits, '-' or '_'. No
// leading, trailing or doubled dot, at most MaxNodeIDLen bytes. Every
// NodeID valid before dots were allowed (ValidateIdentifier) is still
// valid. NodeIDs are compared byte for byte: "DB1" and "db1" are two nodes.
//
// A NodeID goes into NATS subjects and KV keys as NodeIDToken(value),
// never as it is, since a dot would split a subject token in two. The
// returned error wraps ErrInvalidConfig and names field.
func ValidateNodeID(field, value string) error {
	return wire.CheckNodeID(field, value)
}

// NodeIDToken is the form a NodeID takes in NATS subjects and KV keys:
// every '.' becomes '=' ("db1.example.com" -> "db1=example=com"), so that
// the NodeID is exactly one subject token (a dot would separate two) and
// makes a KV key with no dot ("cooldown-db1=example=com"). A NodeID without
// dots is its own token, so subjects and keys of such nodes are unchanged.
// Since '=' is not allowed in a NodeID, two NodeIDs never share a token,
// and NodeIDFromToken gives the NodeID back. nodeID should be valid
// (ValidateNodeID); anything else is mapped the same way, unchecked.
func NodeIDToken(nodeID string) string {
	return wire.NodeIDToken(nodeID)
}

// NodeIDFromToken reverses NodeIDToken: it returns the NodeID whose token
// is token, for a tool that reads a subject or a key. A token that is not
// the token of a valid NodeID (a '.', a '=' at either end or doubled, a
// character no NodeID has) is refused with an error that wraps
// ErrInvalidConfig.
func NodeIDFromToken(token string) (string, error) {
	if strings.ContainsRune(token, '.') {
		return "", fmt.Errorf("%w: node token %q contains '.'", ErrInvalidConfig, token)
	}
	nodeID := strings.ReplaceAll(token, string(wire.NodeIDTokenDot), ".")
	if err := ValidateNodeID("node token", nodeID); err != nil {
		return "", fmt.Errorf("%w: node token %q is not the token of a valid NodeID", ErrInvalidConfig, token)
	}
	return nodeID, nil
}
