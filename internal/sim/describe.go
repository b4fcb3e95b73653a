package sim

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
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

// recordTTL is the LeaseTTL a lease record carries (0 if none).
func recordTTL(value []byte) time.Duration {
	var l struct {
		TTL int64 `json:"ttl_ms"`
	}
	_ = json.Unmarshal(value, &l)
	return time.Duration(l.TTL) * time.Millisecond
}

// short renders an event or effects for a node's trace, values as text.
func short(v any) string {
	var s string
	switch v := v.(type) {
	case []Effect:
		parts := make([]string, 0, len(v))
		for _, e := range v {
			parts = append(parts, short(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case EntryEvent:
		s = "Entry" + shortEntry(v.Entry)
	case Result:
		s = fmt.Sprintf("Result{ID:%d Kind:%d Rev:%d", v.ID, v.Kind, v.Rev)
		if v.Entry.Rev != 0 {
			s += " Entry:" + shortEntry(v.Entry)
		}
		for _, h := range v.History {
			s += " H:" + shortEntry(h)
		}
		s += fmt.Sprintf(" Recreated:%v LastSeq:%d}", v.Recreated, v.LastSeq)
	case Write:
		s = fmt.Sprintf("Write{ID:%d Create:%v Rev:%d %s}", v.ID, v.Create, v.Rev, v.Value)
	case Arm:
		s = "Arm{" + v.At.Format("05.000000") + "}"
		if v.At.IsZero() {
			s = "Arm{-}"
		}
	default:
		s = fmt.Sprintf("%T%+v", v, v)
		s = strings.TrimPrefix(s, "sim.")
	}
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

func shortEntry(e Entry) string {
	if e.Op != OpPut {
		return fmt.Sprintf("{%d op%d}", e.Rev, e.Op)
	}
	return fmt.Sprintf("{%d %s}", e.Rev, e.Value)
}
