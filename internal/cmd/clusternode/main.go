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
//	clusternode -cluster demo -node n1 -nats nats://127.0.0.1:4222 -fence http://127.0.0.1:8080/write
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

	cluster "github.com/ozanturksever/go-cluster"
)

// Event is one line of the node's stdout.
type Event struct {
	TS     int64  `json:"ts"`               // wall clock, Unix nanoseconds
	Node   string `json:"node"`             // NodeID
	Event  string `json:"event"`            // started, become, lose, leader, write, stale_write, validate_error, stopping, stopped, failed
	Epoch  int64  `json:"epoch,omitempty"`  // become (once proven), write, stale_write
	OK     bool   `json:"ok,omitempty"`     // write, stale_write: accepted by the fence
	Leader string `json:"leader,omitempty"` // leader: the new leader ("" = none)
	Error  string `json:"error,omitempty"`  // failures, and the signal received on stopping
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
	)
	flag.Parse()
	out := &emitter{node: *nodeID, enc: json.NewEncoder(os.Stdout)}
	if err := run(out, *clusterID, *nodeID, strings.Split(*urls, ","), *ttl, *renew, *fenceURL, *interval); err != nil {
		out.emit(Event{Event: "failed", Error: err.Error()})
		os.Exit(1)
	}
}

func run(out *emitter, clusterID, nodeID string, urls []string, ttl, renew time.Duration, fenceURL string, interval time.Duration) error {
	if renew == 0 {
		renew = ttl / 4
	}
	f := &fenceClient{url: fenceURL, node: nodeID, http: &http.Client{Timeout: 2 * time.Second}}
	var node *cluster.Node
	var writers sync.WaitGroup
	hooks := cluster.HookFuncs{
		BecomeLeader: func(ctx context.Context) error {
			out.emit(Event{Event: "become"})
			writers.Add(1)
			go func() {
				defer writers.Done()
				lead(ctx, node, f, out, interval)
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
		ClusterID: clusterID, NodeID: nodeID, NATSURLs: urls, LeaseTTL: ttl, RenewInterval: renew,
		Logger: slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})),
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
