package fenced

import (
	"fmt"
	"strings"
)

// KeyPrefix puts state keys in a namespace of the cluster's bucket that
// cannot meet "lease" or "cooldown-<node>": those have no '.'.
const KeyPrefix = "state."

// MaxKeyLen is the longest state key accepted, in bytes.
const MaxKeyLen = 255

// EpochHeader is the header of every state write: the epoch of the
// tenure that wrote it, for any KV or stream client to read.
const EpochHeader = "Go-Cluster-Epoch"

// kvOperationHeader marks a KV deletion ("DEL") or purge ("PURGE").
const kvOperationHeader = "KV-Operation"

// ValidateKey checks a state key: one or more tokens of ASCII letters,
// digits, '-' and '_', separated by single dots ("config",
// "orders.42.status"), at most MaxKeyLen bytes. No wildcards, no empty
// tokens, so that a key is exactly one NATS subject. The error wraps
// ErrInvalidKey and names the key.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: %q is %d bytes, at most %d", ErrInvalidKey, key, len(key), MaxKeyLen)
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

// KVKey is the key of a state entry in the bucket.
func KVKey(key string) string { return KeyPrefix + key }

// filters are the bucket keys Keys and Watch follow for prefix: the key
// itself and every key below it, or all state keys when prefix is "".
func filters(prefix string) []string {
	if prefix == "" {
		return []string{KeyPrefix + ">"}
	}
	return []string{KVKey(prefix), KVKey(prefix) + ".>"}
}

// Subject is the subject of state key key in bucket: one concatenation,
// not two.
func Subject(bucket, key string) string { return "$KV." + bucket + "." + KeyPrefix + key }
