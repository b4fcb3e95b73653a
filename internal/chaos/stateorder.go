package chaos

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
)

// StreamMsg is one message of the bucket's stream as the order recorder
// received it.
type StreamMsg struct {
	Seq   uint64 // stream sequence: the KV revision
	Key   string // KV key: "lease", "state.<key>", "cooldown-<node>"...
	Op    string // the KV-Operation header: "" for a value, "DEL" or "PURGE"
	Value []byte
	Epoch string // the Go-Cluster-Epoch header as sent; "" when absent
}

// Incarnation is the recorded order of one life of the bucket's stream. A
// bucket deleted and created again is a new stream whose sequences start
// at 1 again, so the order is kept per incarnation.
type Incarnation struct {
	Created time.Time   // the stream's creation time: its identity
	Noticed time.Time   // when the recorder first found it
	Msgs    []StreamMsg // every message received, in stream order
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

	mu   sync.Mutex
	incs []*Incarnation

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// startOrderRecorder follows the stream of bucket on js until finish or
// close. The stream need not exist yet.
func startOrderRecorder(js jetstream.JetStream, bucket string) *orderRecorder {
	o := &orderRecorder{js: js, bucket: bucket, stop: make(chan struct{}), done: make(chan struct{})}
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
	created, _, err := o.lookup()
	if err != nil {
		return
	}
	inc := o.incarnation(created)
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
	if again, _, err := o.lookup(); err != nil || !again.Equal(created) {
		return
	}
	it, err := cons.Messages(jetstream.PullExpiry(2*time.Second), jetstream.PullHeartbeat(500*time.Millisecond))
	if err != nil {
		return
	}
	followed := make(chan struct{})
	defer close(followed)
	go func() {
		select {
		case <-o.stop:
		case <-followed:
		}
		it.Stop()
	}()
	var delivered uint64
	for {
		msg, err := it.Next()
		if err != nil {
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

// lookup returns the stream's identity and last sequence.
func (o *orderRecorder) lookup() (created time.Time, lastSeq uint64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := o.js.Stream(ctx, o.stream())
	if err != nil {
		return time.Time{}, 0, err
	}
	info := s.CachedInfo()
	if info.Created.IsZero() {
		return time.Time{}, 0, errors.New("stream without a creation time")
	}
	return info.Created, info.State.LastSeq, nil
}

func (o *orderRecorder) deleteConsumer(cons jetstream.Consumer) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_ = o.js.DeleteConsumer(ctx, o.stream(), cons.CachedInfo().Name) // best effort: InactiveThreshold removes it too
}

// incarnation returns the incarnation created at created, the current one
// or a new one.
func (o *orderRecorder) incarnation(created time.Time) *Incarnation {
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := len(o.incs); n > 0 && o.incs[n-1].Created.Equal(created) {
		return o.incs[n-1]
	}
	inc := &Incarnation{Created: created, Noticed: time.Now()}
	o.incs = append(o.incs, inc)
	return inc
}

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
		m.Epoch = h.Get(cluster.StateEpochHeader)
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
		created, last, err := o.lookup()
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

// incarnations returns a copy of what was recorded.
func (o *orderRecorder) incarnations() []Incarnation {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]Incarnation, len(o.incs))
	for i, inc := range o.incs {
		out[i] = *inc
		out[i].Msgs = append([]StreamMsg(nil), inc.Msgs...)
	}
	return out
}
