package sim

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// describeWrite is a trace line for a write the server handled.
func describeWrite(e election.Write, rev uint64, ok bool) string {
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
	if !ok {
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

// coversOwn says value is a floor written over prev, a held record of
// node at the floor's epoch: a write of its own the node could not lead
// or give back (rules 35, 38, 40), covered so that everyone waits it out.
func coversOwn(prev election.KVEntry, value []byte, node string) bool {
	var f, h struct {
		NodeID string `json:"node_id"`
		Epoch  int64  `json:"epoch"`
		Floor  bool   `json:"floor"`
	}
	if prev.Op != election.Put || json.Unmarshal(value, &f) != nil || json.Unmarshal(prev.Value, &h) != nil {
		return false
	}
	return f.Floor && h.NodeID == node && !h.Floor && h.Epoch == f.Epoch
}

// recordTTL is the LeaseTTL a lease record carries (0 if none).
func recordTTL(value []byte) time.Duration {
	var l struct {
		TTL int64 `json:"ttl_ms"`
	}
	_ = json.Unmarshal(value, &l)
	return time.Duration(l.TTL) * time.Millisecond
}

// short renders an event or actions for a node's trace, values as text.
// Log actions are left out: the trace says what the node did.
func short(v any) string {
	var s string
	switch v := v.(type) {
	case []election.Action:
		parts := make([]string, 0, len(v))
		for _, a := range v {
			if _, ok := a.(election.Log); !ok {
				parts = append(parts, short(a))
			}
		}
		return "[" + strings.Join(parts, " ") + "]"
	case election.Entry:
		s = "Entry" + shortEntry(v.KV)
	case election.Result:
		s = fmt.Sprintf("Result{ID:%d Err:%v Rev:%d", v.ID, v.Err, v.Rev)
		if v.Entry.Rev != 0 {
			s += " Entry:" + shortEntry(v.Entry)
		}
		for _, h := range v.History {
			s += " H:" + shortEntry(h)
		}
		s += fmt.Sprintf(" Recreated:%v LastSeq:%d}", v.Recreated, v.LastSeq)
	case election.Write:
		s = fmt.Sprintf("Write{ID:%d %v Create:%v Rev:%d %s}", v.ID, v.Purpose, v.Create, v.Rev, v.Value)
	case election.Become:
		s = fmt.Sprintf("Become{Epoch:%d Rev:%d}", v.Epoch, v.Rev)
	case election.Lose:
		s = fmt.Sprintf("Lose{Epoch:%d %v}", v.Epoch, v.Cause)
	case election.Arm:
		s = "Arm{" + v.At.Format("05.000000") + "}"
		if v.At.IsZero() {
			s = "Arm{-}"
		}
	default:
		s = fmt.Sprintf("%T%+v", v, v)
		s = strings.TrimPrefix(s, "election.")
	}
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

func shortEntry(e election.KVEntry) string {
	if e.Op != election.Put {
		return fmt.Sprintf("{%d op%d}", e.Rev, e.Op)
	}
	return fmt.Sprintf("{%d %s}", e.Rev, e.Value)
}
