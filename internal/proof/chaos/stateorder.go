package chaos

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/fenced"
)

// StreamMsg is one message of the bucket's stream as the order recorder
// received it.
type StreamMsg struct {
	Seq   uint64 // stream sequence: the KV revision
	Key   string // KV key: "lease", "state.<key>", "cooldown-<node>"...
	Op    string // the KV-Operation header: "" for a value, "DEL" or "PURGE"
	Value []byte
	Epoch string    // the Go-Cluster-Epoch header as sent; "" when absent
	Time  time.Time // when the server stored it
}

// Incarnation is the recorded order of one life of the bucket's stream. A
// bucket deleted and created again is a new stream whose sequences start
// at 1 again, so the order is kept per incarnation.
type Incarnation struct {
	Created  time.Time   // the stream's creation time: its identity
	FirstSeq uint64      // the stream's first_seq: its epochs are above it less one
	Noticed  time.Time   // when the recorder first found it
	Msgs     []StreamMsg // every message received, in stream order
	// LastSeq is the stream's last sequence when the recording ended, the
	// stream still there: messages after the last one received were not
	// seen. 0 when the stream was deleted first: its tail is not known.
	LastSeq uint64
}

// kvOperationHeader is the header a KV client marks deletes and purges
// with.
const kvOperationHeader = "KV-Operation"

// orderRecorder records the total order of the bucket's stream from
// sequence 1, through a consumer of its own that it makes again, from the
// next sequence, whenever delivery stops (a server shut down, a lost
// heartbeat). Messages removed meanwhile (per-key history, a purge) show as
// missing sequences. A consumer dies with its stream, so each consumer's
// messages belong to the incarnation it was made on; a new stream is
// recorded from sequence 1 as a new Incarnation.
type orderRecorder struct {
	js     jetstream.JetStream
	bucket string
	// lookups ask for the stream's identity, one per server: see lookup.
	lookups []jetstream.JetStream

	mu   sync.Mutex
	incs []*Incarnation
	// ended is the creation time of the latest incarnation whose consumer
	// was deleted with it: that one, and every one before, is gone, and an
	// answer naming it is a stale server's (see lookup).
	ended time.Time

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// startOrderRecorder follows the stream of bucket on js until finish or
// close, asking for its identity on lookups (one client per server, each
// bound to its server), or on js when none is given. The stream need not
// exist yet.
func startOrderRecorder(js jetstream.JetStream, bucket string, lookups ...jetstream.JetStream) *orderRecorder {
	if len(lookups) == 0 {
		lookups = []jetstream.JetStream{js}
	}
	o := &orderRecorder{js: js, bucket: bucket, lookups: lookups, stop: make(chan struct{}), done: make(chan struct{})}
	go o.loop()
	return o
}

func (o *orderRecorder) stream() string { return "KV_" + o.bucket }

func (o *orderRecorder) loop() {
	defer close(o.done)
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-retry.C:
		}
		o.follow()
		retry.Reset(20 * time.Millisecond)
	}
}

// follow records the stream's current incarnation from the sequence after
// the last one received, until delivery fails or the recorder stops.
func (o *orderRecorder) follow() {
	created, firstSeq, _, err := o.lookup(context.Background())
	if err != nil {
		return
	}
	inc := o.incarnation(created)
	if inc == nil {
		return // an older incarnation than the last one recorded: a stale answer
	}
	o.mu.Lock()
	inc.FirstSeq = firstSeq
	o.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	cons, err := o.js.CreateConsumer(ctx, o.stream(), jetstream.ConsumerConfig{
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       o.lastSeq(inc) + 1,
		AckPolicy:         jetstream.AckNonePolicy,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: 5 * time.Second,
	})
	cancel()
	if err != nil {
		return
	}
	defer o.deleteConsumer(cons)
	// The stream may have been replaced between the lookup and the
	// consumer; a consumer made after that would read the new one.
	if again, _, _, err := o.lookup(context.Background()); err != nil || !again.Equal(created) {
		return
	}
	it, err := cons.Messages(jetstream.PullExpiry(2*time.Second), jetstream.PullHeartbeat(500*time.Millisecond))
	if err != nil {
		return
	}
	// The watch ends before follow returns: nothing outlives close.
	watched := make(chan struct{})
	defer func() { <-watched }()
	followed := make(chan struct{})
	defer close(followed)
	go func() {
		defer close(watched)
		o.watch(inc, it, followed)
	}()
	var delivered uint64
	for {
		msg, err := it.Next()
		if errors.Is(err, jetstream.ErrConsumerDeleted) {
			o.end(inc) // deleted with its stream: never follow it again
			return
		} else if err != nil {
			return
		}
		meta, err := msg.Metadata()
		if err != nil || meta.Sequence.Consumer != delivered+1 {
			return // a delivery lost: start again after the last one kept
		}
		delivered++
		o.add(inc, msg, meta.Sequence.Stream)
	}
}

// lookup returns the stream's identity and last sequence: of the answers
// of every server, the one naming the latest incarnation. One server's
// answer may name a deleted stream: a server cut off from the others (a
// route partition) still has it, and answers stream info from its copy
// (docs/design.md C4). Seen in a run (seed 99): the recorder, connected to
// such a server, took the bucket created again meanwhile for the old one
// and recorded the new stream's messages after the old stream's, from the
// old last sequence on. Incarnations never come back, so the latest
// answered is the current one while any server on the majority's side
// answers. But a server cut off while the stream was deleted and created
// again answers for the deleted one until it catches up, also on the other
// servers' connections (every server that deems itself able to answer
// does, and a client takes the first reply), while those of the new
// stream's group fail, leaderless, just after the create
// (internal/natstest TestARejoiningServerAnswersForTheStreamDeletedWhileItWasCutOff):
// the only answer then names the deleted stream. So the recorder never
// goes back to an incarnation older than the latest it found
// (incarnation), nor to one whose consumer was deleted with it (end), and,
// while it follows one, watches for a newer one (watch).
func (o *orderRecorder) lookup(ctx context.Context) (created time.Time, firstSeq, lastSeq uint64, err error) {
	type answer struct {
		created           time.Time
		firstSeq, lastSeq uint64
		err               error
	}
	answers := make([]answer, len(o.lookups))
	var wg sync.WaitGroup
	for i, js := range o.lookups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			s, err := js.Stream(ctx, o.stream())
			switch {
			case err != nil:
				answers[i].err = err
			case s.CachedInfo().Created.IsZero():
				answers[i].err = errors.New("stream without a creation time")
			default:
				info := s.CachedInfo()
				answers[i] = answer{created: info.Created, firstSeq: info.Config.FirstSeq, lastSeq: info.State.LastSeq}
			}
		}()
	}
	wg.Wait()
	err = answers[0].err
	for _, a := range answers {
		if a.err == nil && a.created.After(created) {
			created, firstSeq, lastSeq, err = a.created, a.firstSeq, a.lastSeq, nil
		}
	}
	return created, firstSeq, lastSeq, err
}

func (o *orderRecorder) deleteConsumer(cons jetstream.Consumer) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_ = o.js.DeleteConsumer(ctx, o.stream(), cons.CachedInfo().Name) // best effort: InactiveThreshold removes it too
}

// incarnation returns the incarnation created at created, the current one
// or a new one; nil if created is before the current one's creation, or
// not after an incarnation that ended: a stale answer (docs/design.md
// §3.6: creation times grow).
func (o *orderRecorder) incarnation(created time.Time) *Incarnation {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !created.After(o.ended) {
		return nil
	}
	if n := len(o.incs); n > 0 && o.incs[n-1].Created.Equal(created) {
		return o.incs[n-1]
	} else if n > 0 && created.Before(o.incs[n-1].Created) {
		return nil
	}
	inc := &Incarnation{Created: created, Noticed: time.Now()}
	o.incs = append(o.incs, inc)
	return inc
}

// end records that inc's consumer was deleted: the stream went with it.
func (o *orderRecorder) end(inc *Incarnation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if inc.Created.After(o.ended) {
		o.ended = inc.Created
	}
}

// watch stops it when the recorder stops, when followed is closed, or
// when a server names an incarnation newer than inc, which it records:
// inc was deleted, and a consumer made for it while a stale server
// answered for it may read the new stream (incarnations drops what it
// read from the new one's creation on).
func (o *orderRecorder) watch(inc *Incarnation, it jetstream.MessagesContext, followed <-chan struct{}) {
	defer it.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // a lookup under way ends with the watch
		select {
		case <-o.stop:
		case <-followed:
		case <-ctx.Done():
		}
		cancel()
	}()
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if created, _, _, err := o.lookup(ctx); err == nil && created.After(inc.Created) {
			o.incarnation(created)
			return
		}
	}
}

// watchInterval is how often the recorder asks, while it follows an
// incarnation, whether a newer one exists.
const watchInterval = time.Second

func (o *orderRecorder) lastSeq(inc *Incarnation) uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := len(inc.Msgs); n > 0 {
		return inc.Msgs[n-1].Seq
	}
	return 0
}

func (o *orderRecorder) add(inc *Incarnation, msg jetstream.Msg, seq uint64) {
	m := StreamMsg{
		Seq:   seq,
		Key:   strings.TrimPrefix(msg.Subject(), "$KV."+o.bucket+"."),
		Value: msg.Data(),
	}
	if h := msg.Headers(); h != nil {
		m.Op = h.Get(kvOperationHeader)
		m.Epoch = h.Get(fenced.EpochHeader)
	}
	if meta, err := msg.Metadata(); err == nil {
		m.Time = meta.Timestamp
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := len(inc.Msgs); n == 0 || seq > inc.Msgs[n-1].Seq {
		inc.Msgs = append(inc.Msgs, m)
	}
}

// finish waits, up to timeout, until every message of the stream as it is
// now has been received, records its last sequence, and stops. Nothing may
// write to the bucket any more. It reports whether the recorder caught up.
func (o *orderRecorder) finish(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	caught := false
	for {
		created, _, last, err := o.lookup(context.Background())
		if err == nil {
			o.mu.Lock()
			if n := len(o.incs); n > 0 && o.incs[n-1].Created.Equal(created) {
				inc := o.incs[n-1]
				inc.LastSeq = last
				caught = len(inc.Msgs) > 0 && inc.Msgs[len(inc.Msgs)-1].Seq >= last || last == 0
			}
			o.mu.Unlock()
		}
		if caught || !time.Now().Before(deadline) {
			break
		}
		t := time.NewTimer(20 * time.Millisecond)
		<-t.C
	}
	o.close()
	return caught
}

// close stops the recorder and waits for it.
func (o *orderRecorder) close() {
	o.stopOnce.Do(func() { close(o.stop) })
	<-o.done
}

// incarnations returns a copy of what was recorded, each incarnation's
// messages only. A consumer made for the stream's name while the bucket
// was deleted and created again can read the new stream from the old
// one's next sequence on (seed 99, under route partitions); a message
// stored at or after the next incarnation's creation is not the old
// stream's: the old one was deleted before the new one was made, and a
// run's servers share one clock.
func (o *orderRecorder) incarnations() []Incarnation {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]Incarnation, len(o.incs))
	for i, inc := range o.incs {
		out[i] = *inc
		out[i].Msgs = nil
		for _, m := range inc.Msgs {
			if i+1 < len(o.incs) && !m.Time.Before(o.incs[i+1].Created) {
				break // sequences only grow: the rest are the next one's too
			}
			out[i].Msgs = append(out[i].Msgs, m)
		}
	}
	return out
}
