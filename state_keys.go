package cluster

import (
	"fmt"
	"strings"
)

// stateKeyPrefix puts state keys in a namespace of the cluster's bucket
// that cannot meet "lease" or "cooldown-<node>": those have no '.'.
const stateKeyPrefix = "state."

// MaxStateKeyLen is the longest state key accepted, in bytes.
const MaxStateKeyLen = 255

// StateEpochHeader is the header of every state write: the epoch of the
// tenure that wrote it, for any KV or stream client to read.
const StateEpochHeader = "Go-Cluster-Epoch"

// ValidateStateKey checks a state key: one or more tokens of ASCII
// letters, digits, '-' and '_', separated by single dots ("config",
// "orders.42.status"), at most MaxStateKeyLen bytes. No wildcards, no
// empty tokens, so that a key is exactly one NATS subject. The error wraps
// ErrInvalidKey and names the key.
func ValidateStateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if len(key) > MaxStateKeyLen {
		return fmt.Errorf("%w: %q is %d bytes, at most %d", ErrInvalidKey, key, len(key), MaxStateKeyLen)
	}
	for tok := range strings.SplitSeq(key, ".") {
		if tok == "" {
			return fmt.Errorf("%w: %q has an empty token", ErrInvalidKey, key)
		}
		for _, r := range tok {
			if !isKeyRune(r) {
				return fmt.Errorf("%w: %q contains %q; use letters, digits, '-', '_' and '.'", ErrInvalidKey, key, r)
			}
		}
	}
	return nil
}

func isKeyRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}

// stateKVKey is the key of a state entry in the bucket.
func stateKVKey(key string) string { return stateKeyPrefix + key }

// stateFilters are the bucket keys Keys and Watch follow for prefix: the
// key itself and every key below it, or all state keys when prefix is "".
func stateFilters(prefix string) []string {
	if prefix == "" {
		return []string{stateKeyPrefix + ">"}
	}
	return []string{stateKVKey(prefix), stateKVKey(prefix) + ".>"}
}

// stateSubject is the subject of state key key in bucket: one
// concatenation, not two.
func stateSubject(bucket, key string) string { return "$KV." + bucket + "." + stateKeyPrefix + key }

// kvOperationHeader marks a KV deletion ("DEL") or purge ("PURGE").
const kvOperationHeader = "KV-Operation"
