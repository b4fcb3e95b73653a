package chaos

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// StateHistory is what CheckState judges: the recorded order of the
// bucket's stream, every state write made and what it returned, when the
// bucket was deleted, and the tenures the Checker recorded.
type StateHistory struct {
	Order     []Incarnation
	Writes    []StateTry
	Deletions []time.Time // when FaultBucketRecreate deleted the bucket (tried to: a failed delete may have deleted it)
	Tenures   []Tenure
}

// StateStats are the counts of the fenced-state check.
type StateStats struct {
	Acked     int            // writes acknowledged (each write of a Commit counts)
	Commits   int            // Commits acknowledged
	Fenced    int            // writes refused with ErrFenced (the server refused them)
	NotLeader int            // writes refused with ErrNotLeader alone (the node did not send them)
	Unknown   map[string]int // writes that failed otherwise, by cause: they may or may not have landed
	// UnknownErr is one error of each cause in Unknown, for the report.
	UnknownErr map[string]string

	Streams   int // incarnations of the bucket's stream recorded
	InOrder   int // state writes in the recorded order
	Checked   int // of those, checked against the lease record before them
	Unchecked int // of those, not checked: a message the recorder did not see lies between them and the last lease record it saw
	NotSeen   int // stream messages the recorder did not see (removed by the history limit or a purge before it read them)

	LostToRecreate int // acknowledged writes not in the order: the bucket was deleted after they were sent
	LostUnseen     int // acknowledged writes not in the order: their revision is one the recorder did not see
}

// span is a stretch of sequences the recorder did not see, To included.
type span struct{ From, To uint64 }

// placed is where a tagged write sits in the recorded order.
type placed struct {
	inc int // index of the incarnation
	msg StreamMsg
}

// CheckState checks the fenced-state guarantee on a recorded order:
//
//   - Every state write in the order was accepted while its writer held the
//     lease: the latest lease record before it in the stream is a held
//     record of this protocol ("v":3) of the writer's NodeID whose epoch
//     is the write's Go-Cluster-Epoch header and within its incarnation's
//     range (docs/design.md §2.4: above the base, at most base + its
//     revision; the runs never rebase, so the base is the stream's
//     creation time in µs less one), and that epoch is not a tenure of
//     another instance. A write after a message the recorder did not see is not
//     checked (counted in Unchecked).
//   - Every acknowledged write is in the order at the revision State
//     returned, unless the bucket was deleted after it was sent, or its
//     revision is one the recorder did not see (counted, not a violation).
//   - No refused write (ErrFenced, ErrNotLeader) is in the order, and a
//     Commit whose outcome is unknown landed whole or not at all.
func CheckState(h StateHistory) (StateStats, []string) {
	stats := StateStats{Unknown: map[string]int{}, UnknownErr: map[string]string{}, Streams: len(h.Order)}
	var out []string
	tenureOf := map[int64][]string{} // epoch -> instances whose tenure had it
	for _, t := range h.Tenures {
		if t.Epoch != 0 && !slices.Contains(tenureOf[t.Epoch], t.Instance) {
			tenureOf[t.Epoch] = append(tenureOf[t.Epoch], t.Instance)
		}
	}
	seen := map[string]placed{}
	unseen := make([][]span, len(h.Order))
	for i, inc := range h.Order {
		v, spans := checkIncarnation(i, inc, tenureOf, seen, &stats)
		out = append(out, v...)
		unseen[i] = spans
	}
	out = append(out, checkWrites(h, seen, unseen, &stats)...)
	return stats, out
}

// checkIncarnation checks every state write of one incarnation against the
// lease record before it, records where each tag sits, and returns the
// stretches the recorder did not see.
func checkIncarnation(i int, inc Incarnation, tenureOf map[int64][]string, seen map[string]placed, stats *StateStats) ([]string, []span) {
	var out []string
	var spans []span
	var lease *StreamMsg         // the latest lease record received
	blind := false               // a message was not seen since lease
	next := max(inc.FirstSeq, 1) // the stream's first sequence (docs/design.md §2.1)
	for j := range inc.Msgs {
		m := inc.Msgs[j]
		if m.Seq < next {
			continue // not in order: the recorder keeps only increasing sequences
		}
		if m.Seq > next {
			spans = append(spans, span{next, m.Seq - 1})
			stats.NotSeen += int(m.Seq - next)
			blind = true
		}
		next = m.Seq + 1
		switch {
		case m.Key == wire.LeaseKey:
			lease, blind = &inc.Msgs[j], false
		case strings.HasPrefix(m.Key, "state."):
			stats.InOrder++
			if _, dup := seen[string(m.Value)]; !dup {
				seen[string(m.Value)] = placed{inc: i, msg: m}
			}
			if blind {
				stats.Unchecked++
				continue
			}
			stats.Checked++
			if why := fencedBy(m, lease, inc.FirstSeq, tenureOf); why != "" {
				out = append(out, fmt.Sprintf("fenced state broken: state write %q (key %s, revision %d of stream #%d) was accepted, but %s",
					m.Value, strings.TrimPrefix(m.Key, "state."), m.Seq, i+1, why))
			}
		}
	}
	switch {
	case inc.LastSeq >= next:
		spans = append(spans, span{next, inc.LastSeq})
		stats.NotSeen += int(inc.LastSeq - next + 1)
	case inc.LastSeq == 0:
		spans = append(spans, span{next, math.MaxUint64}) // deleted: the tail is not known
	}
	return out, spans
}

// fencedBy says what is wrong with state write m accepted after lease
// (nil: none received) in an incarnation whose epochs are above base, or ""
// when its writer held the lease then.
func fencedBy(m StreamMsg, lease *StreamMsg, firstSeq uint64, tenureOf map[int64][]string) string {
	inst, node, ok := parseStateTag(string(m.Value))
	if !ok {
		return "it is not a write of the chaos writer: nobody can tell who made it"
	}
	epoch, err := strconv.ParseInt(m.Epoch, 10, 64)
	if err != nil {
		return fmt.Sprintf("its %s header %q is not an epoch", fenced.EpochHeader, m.Epoch)
	}
	if lease == nil {
		return "no lease record comes before it in its stream"
	}
	at := fmt.Sprintf("the latest lease record before it (revision %d)", lease.Seq)
	base, idx := bucketmeta.Base(firstSeq, 0), bucketmeta.Index(firstSeq, lease.Seq)
	if lease.Op != "" {
		return fmt.Sprintf("%s is a %s marker", at, lease.Op)
	}
	l, err := wire.DecodeLease(lease.Value, lease.Seq)
	switch {
	case err != nil:
		return fmt.Sprintf("%s is not a lease record (%v)", at, err)
	case l.Version != wire.Protocol:
		return fmt.Sprintf("%s is a record of protocol %d", at, max(l.Version, 1))
	case l.Epoch <= base || uint64(l.Epoch-base) > idx:
		return fmt.Sprintf("%s has epoch %d, outside its incarnation's range (%d, %d]", at, l.Epoch, base, base+int64(min(idx, math.MaxInt64/2)))
	case l.NodeID == "":
		return fmt.Sprintf("%s is released (epoch %d)", at, l.Epoch)
	case l.NodeID != node:
		return fmt.Sprintf("%s is held by %s at epoch %d, not by the writer %s", at, l.NodeID, l.Epoch, inst)
	case l.Epoch != epoch:
		return fmt.Sprintf("it carries epoch %d while %s is %s's at epoch %d", epoch, at, node, l.Epoch)
	}
	if insts := tenureOf[epoch]; len(insts) > 0 && !slices.Contains(insts, inst) {
		return fmt.Sprintf("epoch %d was the tenure of %s, not of the writer %s", epoch, strings.Join(insts, ", "), inst)
	}
	return ""
}

// checkWrites checks each write's outcome against the order: acknowledged
// writes are there, refused ones are not, and Commits are whole.
func checkWrites(h StateHistory, seen map[string]placed, unseen [][]span, stats *StateStats) []string {
	var out []string
	commits := map[uint64][]StateTry{} // Commits of unknown outcome
	for _, w := range h.Writes {
		p, found := seen[w.Value]
		switch w.Outcome {
		case Acked:
			stats.Acked++
			if w.Commit != 0 && w.Seq == w.Commit+uint64(w.Writes)-1 {
				stats.Commits++ // counted at its last write
			}
			switch {
			case !found:
				switch excuse(h, w, w.Revision, unseen) {
				case "recreate":
					stats.LostToRecreate++
				case "unseen":
					stats.LostUnseen++
				default:
					out = append(out, fmt.Sprintf("fenced state broken: acknowledged write %q (key %s, revision %d, epoch %d, by %s) is missing from the stream",
						w.Value, w.Key, w.Revision, w.Epoch, w.Instance))
				}
			case p.msg.Seq != w.Revision || p.msg.Key != "state."+w.Key:
				out = append(out, fmt.Sprintf("fenced state broken: acknowledged write %q (key %s, revision %d) is in stream #%d as key %s at revision %d",
					w.Value, w.Key, w.Revision, p.inc+1, strings.TrimPrefix(p.msg.Key, "state."), p.msg.Seq))
			}
		case Fenced, NotLeader:
			if w.Outcome == Fenced {
				stats.Fenced++
			} else {
				stats.NotLeader++
			}
			if found {
				out = append(out, fmt.Sprintf("fenced state broken: write %q (key %s, by %s) %s, yet it is in stream #%d at revision %d",
					w.Value, w.Key, w.Instance, w.Outcome, p.inc+1, p.msg.Seq))
			}
		case Unknown:
			if stats.Unknown[w.Cause]++; stats.UnknownErr[w.Cause] == "" {
				stats.UnknownErr[w.Cause] = w.Err
			}
			if w.Commit != 0 {
				commits[w.Commit] = append(commits[w.Commit], w)
			}
		}
	}
	for _, c := range slices.Sorted(maps.Keys(commits)) {
		if v := checkWhole(h, commits[c], seen, unseen); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// checkWhole: a Commit of unknown outcome is in the order whole or not at
// all, but for writes the recorder could not have seen.
func checkWhole(h StateHistory, ws []StateTry, seen map[string]placed, unseen [][]span) string {
	var in []placed
	var first StateTry // the first write found
	for _, w := range ws {
		if p, ok := seen[w.Value]; ok {
			if len(in) == 0 {
				first = w
			}
			in = append(in, p)
		}
	}
	if len(in) == 0 || len(in) == len(ws) {
		return ""
	}
	// A batch is stored in one piece: the writes missing would sit next to
	// those found.
	for _, w := range ws {
		if _, ok := seen[w.Value]; ok {
			continue
		}
		rev := in[0].msg.Seq + w.Seq - first.Seq
		if excuse(h, w, rev, unseen) != "" {
			return ""
		}
	}
	return fmt.Sprintf("fenced state broken: Commit by %s (outcome unknown: %s) landed in part: %d of its %d writes are in stream #%d from revision %d",
		ws[0].Instance, ws[0].Cause, len(in), len(ws), in[0].inc+1, in[0].msg.Seq)
}

// excuse says why write w, not in the order, may be missing without a
// fault of the library: "recreate" when the bucket was deleted after it was
// sent, "unseen" when revision rev is one the recorder did not see in a
// stream that existed when it was sent or later; "" when nothing excuses it.
func excuse(h StateHistory, w StateTry, rev uint64, unseen [][]span) string {
	for _, d := range h.Deletions {
		if !d.Before(w.Sent) {
			return "recreate"
		}
	}
	from := 0 // the last incarnation found before w was sent
	for i, inc := range h.Order {
		if !inc.Noticed.After(w.Sent) {
			from = i
		}
	}
	for i := from; i < len(unseen); i++ {
		for _, s := range unseen[i] {
			if rev >= s.From && rev <= s.To {
				return "unseen"
			}
		}
	}
	return ""
}
