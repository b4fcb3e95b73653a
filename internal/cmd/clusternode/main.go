// Command clusternode is one go-cluster node as an OS process, for the
// process-crash tests (internal/proctest): kill -9, SIGSTOP/SIGCONT,
// SIGTERM, and NATS server restarts under running nodes.
//
// It prints one JSON object per line on stdout for every event (see Event),
// and logs the library's own logs as JSON on stderr. While it leads, it
// proves its tenure with ValidateLeadership and writes to a fenced resource
// (an HTTP endpoint given by -fence) with the epoch it got, every
// -write-interval. When a tenure ends it makes one more write with that
// tenure's epoch, as a stale leader that has not noticed would; the fence
// must refuse it. SIGTERM and SIGINT stop the node gracefully (a leader
// hands over at once) and exit 0; a node that stops on its own exits 1.
//
// With -state, the leader writes the cluster's fenced state instead
// (Node.State().Put, one new key "w.<node>.<seq>" per write, so that every
// write stays in the bucket's stream), and reports each attempt as a
// state_send event before the Put and a state_put event after it: acked
// with its revision, or refused (fenced, not_leader) or failed without a
// verdict (error). When a tenure ends it
// goes on with -stale-puts more attempts, as a leader that has not noticed
// would, then reports state_done.
//
//	clusternode -cluster demo -node n1 -nats nats://127.0.0.1:4222 -fence http://127.0.0.1:8080/write
//	clusternode -cluster demo -node n1 -nats nats://127.0.0.1:4222 -state -write-interval 5ms
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
)

// Event is one line of the node's stdout.
type Event struct {
	TS     int64  `json:"ts"`               // wall clock, Unix nanoseconds
	Node   string `json:"node"`             // NodeID
	Event  string `json:"event"`            // started, become, lose, leader, write, stale_write, validate_error, state_send, state_put, state_done, stopping, stopped, failed
	Epoch  int64  `json:"epoch,omitempty"`  // become (once proven), write, stale_write; state_put: the tenure's whose writer sent it
	OK     bool   `json:"ok,omitempty"`     // write, stale_write: accepted by the fence; state_put: acknowledged
	Leader string `json:"leader,omitempty"` // leader: the new leader ("" = none)
	Error  string `json:"error,omitempty"`  // failures, and the signal received on stopping

	// State writes (-state).
	Seq     int64  `json:"seq,omitempty"`     // state_send, state_put: the write's number in this process (its key is "w.<node>.<seq>")
	Rev     uint64 `json:"rev,omitempty"`     // state_put: the revision (stream sequence) of an acknowledged write
	Sent    int64  `json:"sent,omitempty"`    // state_send, state_put: when Put was called, Unix nanoseconds
	Outcome string `json:"outcome,omitempty"` // state_put: acked, fenced (ErrFenced), not_leader (ErrNotLeader), error (no verdict)
}

// emitter writes events as JSON lines, one at a time.
type emitter struct {
	mu   sync.Mutex
	node string
	enc  *json.Encoder
}

func (e *emitter) emit(ev Event) {
	ev.TS, ev.Node = time.Now().UnixNano(), e.node
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = e.enc.Encode(ev)
}

// fenceWrite is one write offered to the fenced resource.
type fenceWrite struct {
	Node  string `json:"node"`
	Epoch int64  `json:"epoch"`
	Stale bool   `json:"stale,omitempty"` // the stale probe after a tenure ended
}

// fenceReply is the resource's answer.
type fenceReply struct {
	OK      bool  `json:"ok"`
	Highest int64 `json:"highest"`
}

func main() {
	var (
		clusterID = flag.String("cluster", "", "ClusterID")
		nodeID    = flag.String("node", "", "NodeID")
		urls      = flag.String("nats", "nats://127.0.0.1:4222", "comma-separated NATS URLs")
		ttl       = flag.Duration("ttl", 2*time.Second, "LeaseTTL")
		renew     = flag.Duration("renew", 0, "RenewInterval (default LeaseTTL/4)")
		fenceURL  = flag.String("fence", "", "URL of the fenced resource (POST JSON); empty: no writes")
		interval  = flag.Duration("write-interval", 100*time.Millisecond, "pause between fenced writes while leading")
		replicas  = flag.Int("replicas", 1, "Bucket.Replicas")
		state     = flag.Bool("state", false, "write fenced state (Node.State().Put) while leading, instead of the fence")
		stale     = flag.Int("stale-puts", 5, "with -state: attempts after a tenure ends")
	)
	flag.Parse()
	out := &emitter{node: *nodeID, enc: json.NewEncoder(os.Stdout)}
	o := options{clusterID: *clusterID, nodeID: *nodeID, urls: strings.Split(*urls, ","), ttl: *ttl, renew: *renew,
		replicas: *replicas, fenceURL: *fenceURL, interval: *interval, state: *state, stalePuts: *stale}
	if err := run(out, o); err != nil {
		out.emit(Event{Event: "failed", Error: err.Error()})
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	clusterID, nodeID string
	urls              []string
	ttl, renew        time.Duration
	replicas          int
	fenceURL          string
	interval          time.Duration
	state             bool
	stalePuts         int
}

func run(out *emitter, o options) error {
	if o.renew == 0 {
		o.renew = o.ttl / 4
	}
	f := &fenceClient{url: o.fenceURL, node: o.nodeID, http: &http.Client{Timeout: 2 * time.Second}}
	var node *cluster.Node
	var writers sync.WaitGroup
	sw := &stateWriter{out: out, interval: o.interval, stale: o.stalePuts}
	hooks := cluster.HookFuncs{
		BecomeLeader: func(ctx context.Context) error {
			out.emit(Event{Event: "become"})
			writers.Add(1)
			go func() {
				defer writers.Done()
				if o.state {
					sw.lead(ctx, node)
				} else {
					lead(ctx, node, f, out, o.interval)
				}
			}()
			return nil
		},
		LoseLeadership: func(context.Context) error {
			out.emit(Event{Event: "lose"})
			return nil
		},
		LeaderChange: func(_ context.Context, leader string) error {
			out.emit(Event{Event: "leader", Leader: leader})
			return nil
		},
	}
	n, err := cluster.NewNode(cluster.Config{
		ClusterID: o.clusterID, NodeID: o.nodeID, NATSURLs: o.urls, LeaseTTL: o.ttl, RenewInterval: o.renew,
		Bucket: cluster.BucketOptions{Replicas: o.replicas},
		// Named, so that the server's per-connection counts (/connz) tell the nodes apart.
		NATSOptions: []nats.Option{nats.Name("clusternode-" + o.nodeID)},
		Logger:      slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, hooks)
	if err != nil {
		return err
	}
	node = n
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = n.Start(ctx)
	cancel()
	if err != nil {
		return err
	}
	out.emit(Event{Event: "started"})

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sigs:
		out.emit(Event{Event: "stopping", Error: s.String()})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := n.Stop(ctx); err != nil {
			return err
		}
		writers.Wait()
		out.emit(Event{Event: "stopped"})
		return nil
	case <-n.Done():
		writers.Wait()
		return fmt.Errorf("node stopped on its own: %w", n.Err())
	}
}

// lead is the leader's work during one tenure.
func lead(ctx context.Context, n *cluster.Node, f *fenceClient, out *emitter, interval time.Duration) {
	var epoch int64
	for ctx.Err() == nil {
		e, err := n.ValidateLeadership(ctx)
		if err != nil {
			if ctx.Err() == nil {
				out.emit(Event{Event: "validate_error", Error: err.Error()})
			}
		} else {
			epoch = e
			ok, err := f.write(e, false)
			out.emit(Event{Event: "write", Epoch: e, OK: ok, Error: errText(err)})
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
	if epoch > 0 {
		// A stale leader that did not notice the end of its tenure.
		ok, err := f.write(epoch, true)
		out.emit(Event{Event: "stale_write", Epoch: epoch, OK: ok, Error: errText(err)})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// fenceClient writes to the fenced resource over HTTP.
type fenceClient struct {
	url  string
	node string
	http *http.Client
}

func (f *fenceClient) write(epoch int64, stale bool) (bool, error) {
	if f.url == "" {
		return false, errors.New("no fence")
	}
	body, _ := json.Marshal(fenceWrite{Node: f.node, Epoch: epoch, Stale: stale})
	resp, err := f.http.Post(f.url, "application/json", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var r fenceReply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return false, err
	}
	return r.OK, nil
}
