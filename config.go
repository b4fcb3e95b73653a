package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/engine"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Config configures a Node. ClusterID, NodeID and a way to reach NATS
// (NATSURLs or Conn) are required; the rest have defaults.
type Config struct {
	// ClusterID names the cluster: the bucket is "cluster-<ClusterID>".
	// Letters, digits, '-' and '_' only, at most 64 bytes: bucket names
	// allow no '.'.
	ClusterID string
	// NodeID names this node; unique within the cluster. The host name is
	// a good choice, dots included ("db1.example.com"): labels of letters,
	// digits, '-' and '_' separated by single dots, at most 253 bytes. In
	// NATS subjects and KV keys it appears with each '.' written '='
	// ("db1=example=com"); everywhere else (the lease record, hooks, health
	// replies) as it is.
	NodeID string
	// NATSURLs are the servers to connect to; all of them are used (the
	// client picks one and fails over to the others). Ignored when Conn is set.
	NATSURLs []string
	// NATSCredentials is an optional path to a NATS credentials (.creds) file.
	NATSCredentials string
	// LeaseTTL is how long a lease lasts without renewal: after a leader
	// crashes, a follower takes over LeaseTTL after it last saw the lease
	// change. Default 10s, minimum 500ms, maximum 24h. It is the TTL of a bucket this node creates: a cluster
	// has one, kept in its bucket's metadata, which every node follows
	// (logging once when its own differs). Change it on a running cluster
	// with go-cluster init --lease-ttl (docs/production.md).
	LeaseTTL time.Duration
	// RenewInterval is how often the leader renews. Default 3s; at most
	// LeaseTTL/3, so that two renewals can fail before the lease is at risk.
	RenewInterval time.Duration
	// Logger receives structured logs. Default slog.Default().
	Logger *slog.Logger

	// Conn is an existing connection to use instead of dialling NATSURLs.
	// The Node does not close it. It should reconnect forever
	// (nats.MaxReconnects(-1)); a closed connection stops the Node.
	Conn *nats.Conn
	// NATSOptions are extra options (TLS, NKey, name, ...) for the
	// connection the Node dials. Ignored when Conn is set.
	NATSOptions []nats.Option
	// JetStreamDomain is the JetStream domain the bucket lives in, for a
	// node whose server is not the one with the bucket's JetStream: a node
	// connected to a leaf node, with the bucket on the hub in domain "hub",
	// sets "hub", and every JetStream request goes to $JS.hub.API. Empty:
	// the connection's own JetStream. One subject token; not together with
	// JetStreamAPIPrefix.
	JetStreamDomain string
	// JetStreamAPIPrefix is the subject prefix of the JetStream API, for
	// an account that imports another account's JetStream under its own
	// prefix (what nats.go calls the API prefix). Empty: "$JS.API". Not
	// together with JetStreamDomain.
	JetStreamAPIPrefix string
	// Bucket is how the Node creates the bucket when it is absent: its
	// Replicas (3 or 5 on a production JetStream cluster; default 1),
	// Storage and Placement (see BucketOptions). An existing bucket is
	// used as it is. Bucket.LeaseTTL stays 0: a new bucket gets LeaseTTL.
	Bucket BucketOptions
	// SafetyMargin is how long before the lease could expire on any other
	// node the leader gives up on its own: its tenure ends at
	// lastSuccessfulRenewalSent + LeaseTTL - SafetyMargin. It covers
	// clock-rate drift and the time to stop work. Default LeaseTTL/10.
	SafetyMargin time.Duration
	// RequestTimeout bounds each KV request. Default RenewInterval. A
	// renewal attempt also gets at most half the time left before the
	// tenure deadline, so that retries go on until it.
	RequestTimeout time.Duration
	// DrainTimeout bounds how long StepDown and Stop wait for
	// OnLoseLeadership before releasing the lease. The lease keeps being
	// renewed meanwhile. Default LeaseTTL.
	DrainTimeout time.Duration
	// Cooldown is how long a node that stepped down stays out of elections.
	// Default LeaseTTL.
	Cooldown time.Duration

	// Priority makes a node the preferred leader: a follower whose Priority
	// is higher than the leader's, and which has been connected, healthy
	// and following for a full LeaseTTL (PreemptDelay if longer), asks the
	// leader to hand over to it. The leader does so through the normal
	// release (tenure cancelled, OnLoseLeadership, release), at most once
	// per LeaseTTL of its tenure. Equal priorities never hand over.
	// Default 0: off.
	Priority int
	// PreemptDelay is keepalived's preempt_delay: how long a node with a
	// higher Priority waits, after it is connected, synced and ready,
	// before it asks a leader with a lower priority to hand over, so that
	// a node that has just come back does not take the lead at once. At
	// least LeaseTTL is always waited: a shorter PreemptDelay changes
	// nothing. Later requests stay LeaseTTL apart. A reconnect, a
	// ReadinessCheck passing again, or a pause of the process (SIGSTOP, a
	// stalled VM) past a renewal period, starts the wait anew. Default 0:
	// LeaseTTL; at most 24h.
	PreemptDelay time.Duration
	// ReadinessCheck, if set, says whether this node may lead: the
	// application's own check (its database reachable, its disk not full).
	// It is called every ReadinessInterval with a ctx that ends after
	// ReadinessInterval. A node does not campaign until a check has passed,
	// nor after ReadinessThreshold checks in a row have failed; a leader
	// steps down then. Node.Ready reports the result, and health replies
	// carry it. (Package health answers other nodes' queries; this is the
	// node's own check.)
	ReadinessCheck func(ctx context.Context) error
	// ReadinessInterval is how often ReadinessCheck runs. Default RenewInterval.
	ReadinessInterval time.Duration
	// ReadinessThreshold is how many failed checks in a row make a node
	// not ready. Default 3.
	ReadinessThreshold int
	// OnBecomeLeaderError is what a node does when its OnBecomeLeader
	// returns an error: LeaderHookErrorLogged (the default: log it and go
	// on leading) or LeaderHookErrorStepsDown (step down so that another
	// node leads).
	OnBecomeLeaderError LeaderHookPolicy
	// Metadata is published with this node's lease while it leads (for
	// example {"addr": "10.0.0.7:8080"}): every node and observer reads it
	// with Node.Lease, and any KV client finds it in the lease record
	// (Lease.Metadata). Keys are 1 to 64 letters, digits, '-', '_' or '.';
	// keys and values together take at most 1 KiB as JSON.
	// Optional.
	Metadata map[string]string
	// Metrics receives events for a metrics system (see package metrics).
	// Optional. (Not to be confused with NewObserver, a node that never
	// campaigns.)
	Metrics Metrics

	// protocolHi, set by tests only, runs the node as a build that speaks
	// protocol versions up to it (0: wire.ProtocolHi): a rolling upgrade
	// tested in one process.
	protocolHi int
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.LeaseTTL == 0 {
		c.LeaseTTL = wire.DefaultLeaseTTL
	}
	if c.RenewInterval == 0 {
		c.RenewInterval = wire.DefaultRenewInterval
		if c.RenewInterval*3 > c.LeaseTTL {
			c.RenewInterval = c.LeaseTTL / 4
		}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.OnBecomeLeaderError == "" {
		c.OnBecomeLeaderError = LeaderHookErrorLogged
	}
	if c.Bucket.Replicas == 0 {
		c.Bucket.Replicas = 1
	}
	if c.SafetyMargin == 0 {
		c.SafetyMargin = c.LeaseTTL / 10
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = c.RenewInterval
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = c.LeaseTTL
	}
	if c.Cooldown == 0 {
		c.Cooldown = c.LeaseTTL
	}
	if c.ReadinessInterval == 0 {
		c.ReadinessInterval = c.RenewInterval
	}
	if c.ReadinessThreshold == 0 {
		c.ReadinessThreshold = 3
	}
	if c.Metrics == nil {
		c.Metrics = noMetrics{}
	}
	return c
}

// check checks c as NewNode uses it: defaults are applied first, so a
// zero duration is valid. It reports every problem at once: the error joins
// one error per problem, each wrapping ErrInvalidConfig and naming its
// field. NewNode and NewObserver return it.
func (c Config) check() error {
	c = c.withDefaults()
	_, err := engine.New(c.engineConfig(), nil) // the bucket's options and the JetStream API
	return c.validate(err)
}

// engineConfig is what the engine takes of c (defaults applied); the
// node adds its hooks, its role and its tests' hooks.
func (c Config) engineConfig() engine.Config {
	return engine.Config{ClusterID: c.ClusterID, NodeID: c.NodeID,
		LeaseTTL: c.LeaseTTL, RenewInterval: c.RenewInterval, SafetyMargin: c.SafetyMargin,
		RequestTimeout: c.RequestTimeout, DrainTimeout: c.DrainTimeout, Cooldown: c.Cooldown,
		PreemptDelay: c.PreemptDelay, Priority: c.Priority, Metadata: c.Metadata,
		Conn: c.Conn, URLs: c.NATSURLs, Credentials: c.NATSCredentials, NATSOptions: c.NATSOptions,
		JetStreamDomain: c.JetStreamDomain, JetStreamAPIPrefix: c.JetStreamAPIPrefix,
		Replicas: c.Bucket.Replicas, Storage: c.Bucket.Storage, Placement: c.Bucket.Placement,
		StepDownOnHookError: c.OnBecomeLeaderError == LeaderHookErrorStepsDown,
		ReadinessCheck:      c.ReadinessCheck, ReadinessInterval: c.ReadinessInterval,
		ReadinessThreshold: c.ReadinessThreshold, ProtocolHi: c.protocolHi,
		Log:     c.Logger.With("cluster", c.ClusterID, "node", c.NodeID),
		Metrics: engineMetrics{c.Metrics},
	}
}

// validate joins every problem of c (defaults applied) and the others',
// each its own error: the engine's (engine.New checks the bucket's
// options and the JetStream API) and NewNode's hooks'.
func (c Config) validate(others ...error) error {
	var errs []error
	for _, check := range []func() []error{c.validateIdentity, c.validateConnection, c.validateTimings, c.validatePreemptDelay, c.validateCounts} {
		errs = append(errs, check()...)
	}
	errs = append(errs, c.validateBucket(), validateMetadata(c.Metadata),
		c.OnBecomeLeaderError.validate())
	for _, err := range others {
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			errs = append(errs, joined.Unwrap()...) // engine.New's: a join of single problems
			continue
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validateIdentity checks the names that become subjects and keys.
func (c Config) validateIdentity() []error {
	return []error{wire.CheckIdentifier("ClusterID", c.ClusterID), wire.CheckNodeID("NodeID", c.NodeID)}
}

// validateConnection checks the way to NATS: Conn, or servers to dial that
// parse as nats.go parses them, and a credentials file that exists.
func (c Config) validateConnection() []error {
	var errs []error
	switch {
	case c.Conn != nil && len(c.NATSURLs) > 0:
		errs = append(errs, fmt.Errorf("%w: Conn and NATSURLs are both set: the Node uses Conn and would ignore NATSURLs; set one", ErrInvalidConfig))
	case c.Conn == nil && len(c.NATSURLs) == 0:
		errs = append(errs, fmt.Errorf("%w: NATSURLs must contain at least one URL (or set Conn)", ErrInvalidConfig))
	}
	for i, u := range c.NATSURLs {
		if err := checkServerURL(u); err != nil {
			errs = append(errs, fmt.Errorf("%w: NATSURLs[%d] %w", ErrInvalidConfig, i, err))
		}
	}
	if c.NATSCredentials != "" {
		if fi, err := os.Stat(c.NATSCredentials); err != nil {
			errs = append(errs, fmt.Errorf("%w: NATSCredentials: %w", ErrInvalidConfig, err))
		} else if fi.IsDir() {
			errs = append(errs, fmt.Errorf("%w: NATSCredentials %q is a directory, not a .creds file", ErrInvalidConfig, c.NATSCredentials))
		}
	}
	return errs
}

// checkServerURL checks one server URL as nats.go reads it: "host:port"
// means "nats://host:port".
func checkServerURL(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("is empty")
	}
	if !strings.Contains(s, "://") {
		s = "nats://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("does not parse: %w", err)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", s)
	}
	return nil
}

// validateTimings checks the lease's durations against each other
// (docs/design.md §3): LeaseTTL > RequestTimeout + SafetyMargin, and
// RenewInterval at most a third of LeaseTTL. A LeaseTTL out of range
// makes the others' bounds meaningless, so it is reported alone.
func (c Config) validateTimings() []error {
	if c.LeaseTTL < wire.MinLeaseTTL || c.LeaseTTL > wire.MaxLeaseTTL {
		return []error{fmt.Errorf("%w: LeaseTTL %v must be between %v and %v", ErrInvalidConfig, c.LeaseTTL, wire.MinLeaseTTL, wire.MaxLeaseTTL)}
	}
	var errs []error
	if c.RenewInterval <= 0 || c.RenewInterval > c.LeaseTTL/3 { // not RenewInterval*3: it can overflow
		errs = append(errs, fmt.Errorf("%w: RenewInterval %v must be positive and at most LeaseTTL/3 (%v)", ErrInvalidConfig, c.RenewInterval, c.LeaseTTL/3))
	}
	if c.SafetyMargin < 0 || c.SafetyMargin > c.LeaseTTL/2 {
		errs = append(errs, fmt.Errorf("%w: SafetyMargin %v must be between 0 and LeaseTTL/2 (%v)", ErrInvalidConfig, c.SafetyMargin, c.LeaseTTL/2))
	} else if c.RequestTimeout < 0 || c.RequestTimeout > c.LeaseTTL-c.SafetyMargin {
		errs = append(errs, fmt.Errorf("%w: RequestTimeout %v must be between 0 and LeaseTTL-SafetyMargin (%v)", ErrInvalidConfig, c.RequestTimeout, c.LeaseTTL-c.SafetyMargin))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"DrainTimeout", c.DrainTimeout}, {"Cooldown", c.Cooldown}, {"ReadinessInterval", c.ReadinessInterval}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%w: %s %v is negative", ErrInvalidConfig, d.name, d.v))
		}
	}
	return errs
}

// validatePreemptDelay checks PreemptDelay on its own: it is bounded by
// wire.MaxLeaseTTL, not by this node's LeaseTTL, which it may exceed.
func (c Config) validatePreemptDelay() []error {
	if c.PreemptDelay < 0 || c.PreemptDelay > wire.MaxLeaseTTL {
		return []error{fmt.Errorf("%w: PreemptDelay %v must be between 0 and %v", ErrInvalidConfig, c.PreemptDelay, wire.MaxLeaseTTL)}
	}
	return nil
}

// validateBucket checks Bucket; its LeaseTTL is LeaseTTL's, set there.
func (c Config) validateBucket() error {
	if c.Bucket.LeaseTTL != 0 {
		return fmt.Errorf("%w: Bucket.LeaseTTL is %v: set the cluster's LeaseTTL as Config.LeaseTTL, which a new bucket gets", ErrInvalidConfig, c.Bucket.LeaseTTL)
	}
	return nil // the rest is the engine's (check)
}

// validateCounts checks the integer settings (Bucket.Replicas with the
// other bucket options).
func (c Config) validateCounts() []error {
	var errs []error
	if c.Priority < 0 {
		errs = append(errs, fmt.Errorf("%w: Priority %d is negative", ErrInvalidConfig, c.Priority))
	}
	if c.ReadinessThreshold < 0 {
		errs = append(errs, fmt.Errorf("%w: ReadinessThreshold %d is negative", ErrInvalidConfig, c.ReadinessThreshold))
	}
	return errs
}

// BucketOptions are the settings of a new bucket that are the operator's
// choice; the rest are the election's. The zero value is one replica in
// file storage, placed anywhere.
type BucketOptions struct {
	// Replicas is the number of copies of the bucket's stream: 1 to 5; 3
	// (or 5) on a production JetStream cluster. 0 means 1.
	Replicas int
	// Storage is jetstream.FileStorage (the zero value) or
	// jetstream.MemoryStorage. A bucket in memory loses the lease and the
	// fenced state when every server holding it restarts. Where the stream
	// is created again, its new creation time starts the epochs above the
	// old ones (docs/design.md §5.4); a stream that keeps its
	// creation time but loses its messages starts its sequences, and so
	// the epochs it derives from them, again: run go-cluster init --rebase
	// after such a restart, as after a restore (docs/production.md).
	Storage jetstream.StorageType
	// Placement, if set, puts the bucket's stream in a JetStream cluster
	// by name (Cluster), on servers with every one of Tags, or both.
	Placement *jetstream.Placement
	// LeaseTTL is the cluster's one LeaseTTL (docs/design.md I2),
	// written into a new bucket's metadata as go-cluster.lease_ttl and
	// go-cluster.lease_ttl_max; every node adopts the bucket's, whatever
	// its own Config says. In a Config it stays 0: Config.LeaseTTL is
	// the one a new bucket gets. An existing bucket keeps its own:
	// go-cluster init --lease-ttl changes it.
	LeaseTTL time.Duration
}
