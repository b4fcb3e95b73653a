package sim

import (
	"encoding/json"
	"fmt"
	"strings"
)

// describeWrite is a trace line for a write the server handled.
func describeWrite(e Write, rev uint64, kind ResultKind) string {
	var l struct {
		NodeID string `json:"node_id"`
		Epoch  int64  `json:"epoch"`
		Next   string `json:"next"`
		Floor  bool   `json:"floor"`
		TTL    int64  `json:"ttl_ms"`
	}
	_ = json.Unmarshal(e.Value, &l)
	what := fmt.Sprintf("holder=%q epoch=%d ttl=%dms", l.NodeID, l.Epoch, l.TTL)
	if l.Floor {
		what += " floor"
	}
	if l.Next != "" {
		what += " next=" + l.Next
	}
	op := fmt.Sprintf("update@%d", e.Rev)
	if e.Create {
		op = "create"
	}
	if kind != ResultOK {
		return fmt.Sprintf("%s %s: conflict", op, what)
	}
	return fmt.Sprintf("%s %s: ok rev %d", op, what, rev)
}

// recordEpoch is the epoch a lease record carries (0 if none).
func recordEpoch(value []byte) int64 {
	var l struct {
		Epoch int64 `json:"epoch"`
	}
	_ = json.Unmarshal(value, &l)
	return l.Epoch
}

// short renders an event or effects for a node's trace, values as text.
func short(v any) string {
	s := fmt.Sprintf("%+v", v)
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
