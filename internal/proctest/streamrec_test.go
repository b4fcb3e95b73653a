package proctest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// streamMsg is one message of a bucket's stream, as a plain JetStream
// client sees it.
type streamMsg struct {
	Seq     uint64
	Subject string
	Epoch   string // the Go-Cluster-Epoch header
	Data    []byte
}

// streamRecorder follows a bucket's stream from its first message with an
// ordered consumer, and keeps every message. Lease records age out of the
// stream (the bucket keeps 8 revisions of a key) within a few renewals, so
// the stream order is read as it happens rather than at the end.
type streamRecorder struct {
	prefix string // "$KV.<bucket>."
	stream jetstream.Stream

	mu   sync.Mutex
	msgs []streamMsg
}

// recordStream starts recording the stream of bucket, which must exist.
func recordStream(t *testing.T, urls []string, bucket string) *streamRecorder {
	t.Helper()
	nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := &streamRecorder{prefix: "$KV." + bucket + "."}
	if r.stream, err = js.Stream(ctx, "KV_"+bucket); err != nil {
		t.Fatal(err)
	}
	cons, err := r.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		meta, err := m.Metadata()
		if err != nil {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.msgs = append(r.msgs, streamMsg{Seq: meta.Sequence.Stream, Subject: m.Subject(),
			Epoch: m.Headers().Get(fenced.EpochHeader), Data: m.Data()})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return r
}

// snapshot returns the messages recorded so far, in stream order.
func (r *streamRecorder) snapshot() []streamMsg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]streamMsg(nil), r.msgs...)
}

// complete waits until the recorder has caught up with the stream's last
// sequence, and fails the test unless it holds every sequence from the
// stream's first (its first_seq, docs/design.md §2.1) on: only then is the
// stream order fully known.
func (r *streamRecorder) complete(t *testing.T) []streamMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := r.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := info.State.LastSeq
	natstest.WaitFor(t, 10*time.Second, func() bool {
		msgs := r.snapshot()
		return len(msgs) > 0 && msgs[len(msgs)-1].Seq >= last
	}, "recorder did not reach the stream's last sequence %d", last)
	msgs := r.snapshot()
	first := max(info.Config.FirstSeq, 1)
	for i, m := range msgs {
		if m.Seq != first+uint64(i) {
			t.Fatalf("recorder missed stream sequences before %d (have %d messages): the stream order is not fully known", m.Seq, i)
		}
	}
	return msgs
}

// key is the bucket key of m ("lease", "state.w.p1.7").
func (r *streamRecorder) key(m streamMsg) string { return strings.TrimPrefix(m.Subject, r.prefix) }
