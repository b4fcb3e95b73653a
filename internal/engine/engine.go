// Package engine runs one node of a cluster: it connects, opens the
// bucket, answers and announces the node, and runs the election machine
// (internal/election) in a loop that carries out its actions, the live
// tenure and its hooks, and the view the node's queries read. Package
// cluster is its face: a Node holds an Engine and calls its methods; the
// store (internal/store) does the I/O the machine asks for.
//
// No lock is held across I/O: Start and Stop take the engine's lock only
// to read or set its fields, so the queries answer at once, and Stop can
// end a Start in progress.
package engine

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/presence"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Config is what the engine needs of its node, defaults applied and
// checked by package cluster (New checks the bucket's options and the
// JetStream API).
type Config struct {
	ClusterID, NodeID string
	Observer          bool // never campaigns
	// The election's timings and settings (cluster.Config's).
	LeaseTTL, RenewInterval, SafetyMargin  time.Duration
	RequestTimeout, DrainTimeout, Cooldown time.Duration
	PreemptDelay                           time.Duration
	Priority                               int // the starting priority
	Metadata                               map[string]string
	// The connection: Conn if set (the engine does not own it), else one
	// dialled to URLs with Credentials and NATSOptions.
	Conn                                *nats.Conn
	URLs                                []string
	Credentials                         string
	NATSOptions                         []nats.Option
	JetStreamDomain, JetStreamAPIPrefix string
	// How a bucket this node creates is made.
	Replicas  int
	Storage   jetstream.StorageType
	Placement *jetstream.Placement
	// StepDownOnHookError ends a tenure whose OnBecomeLeader failed.
	StepDownOnHookError bool
	ReadinessCheck      func(context.Context) error // nil: none
	ReadinessInterval   time.Duration
	ReadinessThreshold  int // failures in a row that make the node not ready (P14)
	Log                 *slog.Logger
	Metrics             Metrics
	Hooks               Hooks // the application's; nil: none
	// Events is told after Hooks of what Hooks are told (before, for a
	// lost tenure), whatever Hooks did; its errors count for nothing.
	// Package cluster's event feed; nil: none.
	Events Hooks
	// BeforeAction and Suspended are for tests. The loop calls
	// BeforeAction with each of the machine's actions (an
	// election.Action) before carrying it out, so that a test can stall
	// it at a chosen point; Suspended moves the node's clock on, as a
	// suspension of the host would (ns).
	BeforeAction func(action any)
	Suspended    *atomic.Int64
	// ProtocolHi is the highest protocol version the node speaks; 0:
	// wire.ProtocolHi. Tests run nodes of the next version beside this
	// build's (docs/design.md §5.9).
	ProtocolHi int
	// Ending is called once every hook has ended, just before Done
	// closes (package cluster closes its event feed there); nil: none.
	Ending func()
}

// Engine is one node's runtime. Its methods are safe for concurrent use.
// An Engine starts once.
type Engine struct {
	cfg       Config
	p         election.Params // the machine's, from cfg
	api       store.API
	bucket    store.Options
	view      *nodeView
	priority  atomic.Int64 // the priority now: SetPriority's, read by a driver being made
	bucketTTL atomic.Int64 // the bucket's LeaseTTL, read by a campaigning node's Start

	// mu guards the fields below. It is never held across I/O or while
	// waiting.
	mu          sync.Mutex
	started     bool
	stopped     bool               // Stop began, Start failed, or the election ended
	startCancel context.CancelFunc // ends a Start in progress
	startDone   chan struct{}      // closed when Start returns
	nc          *nats.Conn
	ownsConn    bool
	d           *driver
	requests    *requestServer         // step-down and status requests (nil: an observer answers none)
	announced   *presence.Announcement // this node's member record, withdrawn at Stop (nil: none)
	tornDown    bool                   // the teardown has begun
	done        chan struct{}          // closed when the node and its hooks have ended
	doneOnce    sync.Once
	err         error
}

// New makes the engine of a node, not started. ready is nil, or why the
// node may not lead until a readiness check passes. It checks the
// bucket's options and the JetStream API: the error joins one error per
// problem, each wrapping wire.ErrInvalidConfig.
func New(cfg Config, ready error) (*Engine, error) {
	e := &Engine{cfg: cfg,
		p: election.Params{NodeID: cfg.NodeID, Instance: nuid.Next(), Observer: cfg.Observer,
			LeaseTTL: cfg.LeaseTTL, RenewInterval: cfg.RenewInterval, SafetyMargin: cfg.SafetyMargin,
			RequestTimeout: cfg.RequestTimeout, DrainTimeout: cfg.DrainTimeout, Cooldown: cfg.Cooldown,
			Priority: cfg.Priority, PreemptDelay: cfg.PreemptDelay, Metadata: cfg.Metadata,
			ReadinessCheck: cfg.ReadinessCheck != nil, ProtocolHi: cfg.ProtocolHi},
		api:    store.API{Domain: cfg.JetStreamDomain, APIPrefix: cfg.JetStreamAPIPrefix},
		bucket: store.Options{Replicas: cfg.Replicas, Storage: cfg.Storage, Placement: cfg.Placement, LeaseTTL: cfg.LeaseTTL},
		view:   newNodeView(cfg.NodeID, maps.Clone(cfg.Metadata), ready),
		done:   make(chan struct{}),
	}
	errs := []error{e.api.Validate()}
	if bad, ok := e.bucket.Validate("Bucket.").(interface{ Unwrap() []error }); ok {
		errs = append(errs, bad.Unwrap()...) // one error per problem
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.Suspended != nil {
		e.view.clock.suspended = cfg.Suspended
	}
	e.priority.Store(int64(cfg.Priority))
	return e, nil
}

// Snapshot is one consistent read of the node's view and lifecycle.
type Snapshot struct {
	Leader   string            // the leader known, "" for none
	Epoch    int64             // the live tenure's, else the last record's
	Lease    wire.Lease        // the last valid lease record seen
	HasRec   bool              // whether Lease is one
	Ready    error             // nil, or why the node may not lead (ReadinessCheck)
	Metadata map[string]string // this node's own (a copy)
	// Synced: the watch showed the key's current value: a campaign
	// waits for it.
	Synced bool
	// Err is why the node stopped on its own (a permanent error); nil
	// while it runs and after a plain Stop.
	Err error
	// BucketTTL is the bucket's LeaseTTL once a campaigning node has read
	// it at Start; 0 before.
	BucketTTL time.Duration
	// Priority is the node's priority now (SetPriority's); Announced
	// says its member record was written at Start.
	Priority  int
	Announced bool
	// Live is nil while the node runs (or has not started) and, if it
	// leads, renews in time (liveness.go); Running is nil once it has
	// started and while it runs.
	Live, Running error
}

// Snapshot reads the view at once.
func (e *Engine) Snapshot() Snapshot {
	s := e.view.snapshot()
	e.mu.Lock()
	s.Err = e.err
	s.Running = e.runningLocked()
	s.Announced = e.announced != nil
	e.mu.Unlock()
	s.Priority = int(e.priority.Load())
	s.BucketTTL = time.Duration(e.bucketTTL.Load())
	s.Live = e.liveness(e.view.Now(), s.Err)
	return s
}

// Tenure is the tenure live now, nil when this node does not lead: the
// one value every query of leadership reads.
func (e *Engine) Tenure() *Tenure { return e.view.Tenure(e.view.Now()) }

// WaitLeader blocks until a leader is known, ctx ends or the node stops
// (wire.ErrStopped).
func (e *Engine) WaitLeader(ctx context.Context) (string, error) {
	return e.view.WaitLeader(ctx, e.done)
}

// Done is closed when the node has stopped and its hooks have ended.
func (e *Engine) Done() <-chan struct{} { return e.done }

// Conn is the connection in use, nil before Start.
func (e *Engine) Conn() *nats.Conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nc
}
