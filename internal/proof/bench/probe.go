package main

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// probeEvery is how often the probe writes.
const probeEvery = 20 * time.Millisecond

// probe writes to a scratch key of a bucket every probeEvery from a
// connection of its own, to tell when the bucket accepts writes.
type probe struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	cancel context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	ok []probeWrite
}

// probeWrite is a successful write: when it was sent and when it returned.
type probeWrite struct{ sent, done time.Time }

func startProbe(ctx context.Context, b *backend, clusterID string) (*probe, error) {
	nc, err := dial(b.urls, "bench probe "+clusterID, time.Second)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	kv, err := js.KeyValue(ctx, "cluster-"+clusterID)
	if err != nil {
		nc.Close()
		return nil, err
	}
	pctx, cancel := context.WithCancel(context.Background())
	p := &probe{nc: nc, js: js, cancel: cancel, done: make(chan struct{})}
	go p.run(pctx, kv)
	return p, nil
}

func (p *probe) run(ctx context.Context, kv jetstream.KeyValue) {
	defer close(p.done)
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		sent := time.Now()
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := kv.Put(wctx, "bench-probe", []byte("x"))
		cancel()
		if err == nil {
			p.mu.Lock()
			p.ok = append(p.ok, probeWrite{sent, time.Now()})
			p.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// firstOKAfter is when the first successful write sent after t returned.
func (p *probe) firstOKAfter(t time.Time) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.ok {
		if w.sent.After(t) {
			return w.done, true
		}
	}
	return time.Time{}, false
}

func (p *probe) stop() {
	p.cancel()
	<-p.done
	p.nc.Close()
}
