package sim

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// describeWrite is a trace line for a write the server handled.
func describeWrite(e election.Write, rev uint64, ok bool) string {
	var l struct {
		NodeID string `json:"node_id"`
		Epoch  int64  `json:"epoch"`
		Next   string `json:"next"`
		TTL    int64  `json:"ttl_ms"`
	}
	_ = json.Unmarshal(e.Value, &l)
	what := fmt.Sprintf("holder=%q epoch=%d ttl=%dms", l.NodeID, l.Epoch, l.TTL)
	if l.Next != "" {
		what += " next=" + l.Next
	}
	op := fmt.Sprintf("update@%d", e.Rev)
	if e.Create {
		op = fmt.Sprintf("create@seq%d", e.LastSeq)
	}
	if !ok {
		return fmt.Sprintf("%s %s: conflict", op, what)
	}
	return fmt.Sprintf("%s %s: ok rev %d", op, what, rev)
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
	case election.ConfirmResult:
		b := v.Bucket
		s = fmt.Sprintf("ConfirmResult{ID:%d Err:%v Created:%s FirstSeq:%d LastSeq:%d Age:%v TTL:%v Max:%v Cluster:%v}", v.ID, v.Err,
			b.Created.Format("15:04:05.000000"), b.FirstSeq, b.LastSeq, b.Age, b.LeaseTTL, b.MaxTTL, b.ClusterMaxTTL)
	case election.WriteResult:
		s = fmt.Sprintf("WriteResult{ID:%d Rev:%d Err:%v}", v.ID, v.Rev, v.Err)
	case election.Write:
		s = fmt.Sprintf("Write{ID:%d %v Create:%v LastSeq:%d Rev:%d %s}", v.ID, v.Purpose, v.Create, v.LastSeq, v.Rev, v.Value)
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
