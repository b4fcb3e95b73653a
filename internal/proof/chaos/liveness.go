package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// snapshot describes what every node believes and what the store holds, for
// the report of a cluster that wedged with nobody leading.
func (r *run) snapshot() string {
	var b strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Fprintf(&b, "      store: lease %s", r.describeLease(ctx))
	if s, err := r.js.Stream(ctx, "KV_"+r.bucket()); err == nil {
		info := s.CachedInfo()
		fmt.Fprintf(&b, "; stream created %s, messages %d, seq %d..%d",
			info.Created.Format("15:04:05.000"), info.State.Msgs, info.State.FirstSeq, info.State.LastSeq)
	} else {
		fmt.Fprintf(&b, "; stream: %v", err)
	}
	for _, m := range r.members {
		n := m.current()
		if n == nil {
			fmt.Fprintf(&b, "\n      %s: not running", m.id)
			continue
		}
		l, ok := n.Lease()
		rec := "no record"
		if ok {
			rec = fmt.Sprintf("record node %q epoch %d rev %d", l.NodeID, l.Epoch, l.Revision)
		}
		fmt.Fprintf(&b, "\n      %s (LeaseTTL %v): leader %v, sees leader %q, epoch %d, %s",
			m.instance(), m.ttl, n.IsLeader(), n.Leader(), n.Epoch(), rec)
	}
	return b.String()
}
