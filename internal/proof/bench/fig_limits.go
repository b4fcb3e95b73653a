package main

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// limitsWorkers is how many API requests figure 10 keeps in flight while
// it fills the server, as figure 5's default start-up does (32 starts at
// a time, most of a start being API requests).
const limitsWorkers = 8

// limitsSample is how many requests of each kind figure 10 times at each
// count of streams, once the server holds that many.
const limitsSample = 200

// limitsIdle is how long figure 10 leaves the server alone before its
// second reading at each count: past the file store's cache expiry (10 s
// after the last access, nats-server filestore.go
// defaultCacheBufferExpiration), so that it reads idle streams.
const limitsIdle = 15 * time.Second

// serverReading is a child server's cost at one moment.
type serverReading struct {
	rss, heap         int64 // bytes: resident set; Go heap live after a GC
	sockets, files    int   // descriptors
	goroutines        int
	streams, consumes int
	diskFiles         int   // files in the store directory
	diskBytes         int64 // their blocks on disk
}

func (bn *bench) readServer(ctx context.Context, b *backend) (serverReading, error) {
	var r serverReading
	rss, err := b.srv.rss()
	if err != nil {
		return r, err
	}
	gs, err := b.srv.goStats(ctx, true)
	if err != nil {
		return r, err
	}
	so, fi, err := b.srv.descriptors()
	if err != nil {
		return r, err
	}
	r.rss, r.heap, r.sockets, r.files, r.goroutines = rss, int64(gs.HeapAlloc), so, fi, gs.Goroutines
	var jsz struct {
		Streams   int `json:"streams"`
		Consumers int `json:"consumers"`
	}
	if err := b.srv.monitor().get(ctx, "/jsz", &jsz); err == nil {
		r.streams, r.consumes = jsz.Streams, jsz.Consumers
	}
	r.diskFiles, r.diskBytes = diskUsage(b.srv.spec.store)
	return r, nil
}

// diskUsage counts the files under dir and the bytes of their blocks on
// disk (du's figure, not their lengths).
func diskUsage(dir string) (files int, bytes int64) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		files++
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				bytes += st.Blocks * 512
			}
		}
		return nil
	})
	return files, bytes
}

// figLimits measures what limits one server (figure 10): the server in a
// child process is filled with the streams of the library's election
// buckets, each with a lease record, and a watch consumer on each (the
// consumer a Node's lease watch makes: ordered, last per subject, memory
// storage), up to each count of -limits. At each count it reads the
// server's resident memory, Go heap, descriptors and goroutines (streams
// just written, and again after limitsIdle), and times STREAM.CREATE and
// CONSUMER.CREATE (those that brought it there, limitsWorkers at a time),
// then STREAM.INFO and a KV put of random streams one at a time.
func (bn *bench) figLimits(ctx context.Context) []row {
	const fig = "10"
	b, err := childBackend(ctx, bn.o.nofile)
	if err != nil {
		return []row{failed(fig, "start server", err)}
	}
	defer b.shutdown()
	nc, err := nats.Connect(b.urls[0], nats.Name("bench limits"))
	if err != nil {
		return []row{failed(fig, "connect", err)}
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return []row{failed(fig, "jetstream", err)}
	}
	// The stream a Node creates, as the template of every other.
	proto := bn.clusterID("lim")
	opts, storage := store.Options{}, "file storage"
	if bn.o.memStorage {
		opts.Storage, storage = jetstream.MemoryStorage, "memory storage"
	}
	if _, _, err := store.Create(ctx, js, proto, opts); err != nil {
		return []row{failed(fig, "template bucket", err)}
	}
	pinfo, err := js.Stream(ctx, wire.KVStream(wire.BucketName(proto)))
	if err != nil {
		return []row{failed(fig, "template bucket", err)}
	}
	tmpl := pinfo.CachedInfo().Config
	base, err := bn.readServer(ctx, b)
	if err != nil {
		return []row{failed(fig, "read server", err)}
	}
	params := fmt.Sprintf("server process, R1, %s, %d requests in flight while filling%s", storage, limitsWorkers, b.limitDesc())
	rows := []row{{fig: fig, name: "empty server (one template bucket)", params: params, median: "-", p99: "-",
		note: base.String()}}

	prefix := bn.clusterID("l")
	bucket := func(i int) string { return wire.BucketName(fmt.Sprintf("%s-%d", prefix, i)) }
	have := 0
	prev := base
	for _, n := range bn.o.limits {
		if n <= have {
			continue
		}
		bn.log.Info("limits", "streams", n)
		label := fmt.Sprintf("%d streams", n)
		// Streams, each with its lease record.
		creates := make([]time.Duration, n-have)
		t0 := time.Now()
		err := parallel(n-have, limitsWorkers, func(k int) error {
			i := have + k
			cfg := tmpl
			cfg.Name = wire.KVStream(bucket(i))
			cfg.Subjects = []string{wire.KVSubject(bucket(i), ">")}
			cfg.FirstSeq = uint64(time.Now().UnixMicro())
			s := time.Now()
			if _, err := js.CreateStream(ctx, cfg); err != nil {
				return fmt.Errorf("stream %d: %w", i, err)
			}
			creates[k] = time.Since(s)
			_, err := js.Publish(ctx, wire.KVSubject(bucket(i), wire.LeaseKey), []byte(`{"node_id":"n1","epoch":1,"ttl_ms":10000,"v":3}`))
			return err
		})
		createWall := time.Since(t0)
		if err != nil {
			return append(rows, failed(fig, label, err))
		}
		streamsRead, err := bn.readServer(ctx, b)
		if err != nil {
			return append(rows, failed(fig, label, err))
		}
		// A watch consumer on each new stream.
		ccreates := make([]time.Duration, n-have)
		t1 := time.Now()
		err = parallel(n-have, limitsWorkers, func(k int) error {
			i := have + k
			s := time.Now()
			_, err := js.CreateConsumer(ctx, wire.KVStream(bucket(i)), jetstream.ConsumerConfig{
				Name:          fmt.Sprintf("watch-%d", i),
				DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy,
				AckPolicy:     jetstream.AckNonePolicy,
				FilterSubject: wire.KVSubject(bucket(i), wire.LeaseKey),
				Replicas:      1,
				MemoryStorage: true,
				// Past the run: nobody pulls from them.
				InactiveThreshold: time.Hour,
			})
			ccreates[k] = time.Since(s)
			if err != nil {
				return fmt.Errorf("consumer %d: %w", i, err)
			}
			return nil
		})
		consumerWall := time.Since(t1)
		if err != nil {
			return append(rows, failed(fig, label, err))
		}
		consRead, err := bn.readServer(ctx, b)
		if err != nil {
			return append(rows, failed(fig, label, err))
		}
		// One at a time, on a server holding n streams and consumers.
		var infos, puts []time.Duration
		for range limitsSample {
			i := rand.IntN(n)
			s := time.Now()
			if _, err := js.Stream(ctx, wire.KVStream(bucket(i))); err != nil {
				return append(rows, failed(fig, label+": STREAM.INFO", err))
			}
			infos = append(infos, time.Since(s))
			s = time.Now()
			if _, err := js.Publish(ctx, wire.KVSubject(bucket(i), wire.LeaseKey), []byte(`{"node_id":"n1","epoch":1,"ttl_ms":10000,"v":3}`)); err != nil {
				return append(rows, failed(fig, label+": put", err))
			}
			puts = append(puts, time.Since(s))
		}
		time.Sleep(limitsIdle)
		idle, err := bn.readServer(ctx, b)
		if err != nil {
			return append(rows, failed(fig, label, err))
		}
		added := float64(n - have)
		last := func(ds []time.Duration) []time.Duration { return ds[max(len(ds)-limitsSample, 0):] }
		r := latencyRow(fig, label+": STREAM.CREATE (the last to get there)", params, last(creates))
		r.note = fmt.Sprintf("%d streams created in %s (%.0f a second); all %d: median %s, p99 %s",
			n-have, ms(createWall), added/createWall.Seconds(), len(creates), ms(summarize(creates).median), ms(summarize(creates).p99))
		rows = append(rows, r)
		r = latencyRow(fig, label+": CONSUMER.CREATE (the last to get there)", params, last(ccreates))
		r.note = fmt.Sprintf("%d consumers created in %s (%.0f a second); all %d: median %s, p99 %s",
			n-have, ms(consumerWall), added/consumerWall.Seconds(), len(ccreates), ms(summarize(ccreates).median), ms(summarize(ccreates).p99))
		rows = append(rows, r)
		rows = append(rows, latencyRow(fig, label+": STREAM.INFO of a random stream, one at a time", params, infos))
		rows = append(rows, latencyRow(fig, label+": KV put (a renewal's write) to a random stream, one at a time", params, puts))
		perStream := streamsRead.minus(prev).per(added)
		perConsumer := consRead.minus(streamsRead).per(added)
		rows = append(rows, row{fig: fig, name: label + ": server cost per stream (with its lease record), just written", params: params,
			median: perStream.String(), p99: "-",
			note: fmt.Sprintf("slope from %d to %d streams; at %d: %s", have, n, n, streamsRead)})
		rows = append(rows, row{fig: fig, name: label + ": server cost per watch consumer", params: params,
			median: perConsumer.String(), p99: "-",
			note: fmt.Sprintf("slope from %d to %d consumers; at %d: %s", have, n, n, consRead)})
		rows = append(rows, row{fig: fig, name: label + fmt.Sprintf(": server cost per stream + consumer, after %v idle", limitsIdle), params: params,
			median: idle.minus(prev).per(added).String(), p99: "-",
			note: fmt.Sprintf("slope from %d to %d; at %d, idle: %s; %s", have, n, n, idle, logWarnings(b.srv.spec.logFile))})
		have, prev = n, idle
	}
	return rows
}

// perUnit is a server's cost divided by a number of streams or consumers.
type perUnit struct{ rss, heap, sockets, files, goroutines, diskFiles, diskBytes float64 }

func (r serverReading) minus(o serverReading) serverReading {
	return serverReading{r.rss - o.rss, r.heap - o.heap, r.sockets - o.sockets, r.files - o.files, r.goroutines - o.goroutines, r.streams - o.streams, r.consumes - o.consumes, r.diskFiles - o.diskFiles, r.diskBytes - o.diskBytes}
}

func (r serverReading) per(n float64) perUnit {
	return perUnit{float64(r.rss) / n, float64(r.heap) / n, float64(r.sockets) / n, float64(r.files) / n, float64(r.goroutines) / n, float64(r.diskFiles) / n, float64(r.diskBytes) / n}
}

func (p perUnit) String() string {
	return fmt.Sprintf("%.1f KiB RSS, %.1f KiB Go heap, %.2f descriptors (%.2f sockets), %.2f goroutines, %.1f files and %.1f KiB on disk",
		p.rss/1024, p.heap/1024, p.sockets+p.files, p.sockets, p.goroutines, p.diskFiles, p.diskBytes/1024)
}

func (r serverReading) String() string {
	return strings.Join([]string{
		fmt.Sprintf("RSS %d MiB", r.rss>>20),
		fmt.Sprintf("Go heap %d MiB", r.heap>>20),
		fmt.Sprintf("%d sockets + %d other descriptors", r.sockets, r.files),
		fmt.Sprintf("%d goroutines", r.goroutines),
		fmt.Sprintf("jsz %d streams, %d consumers", r.streams, r.consumes),
		fmt.Sprintf("store %d files, %d MiB on disk", r.diskFiles, r.diskBytes>>20),
	}, ", ")
}
