package cluster

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := Config{ClusterID: "c", NodeID: "n", NATSURLs: []string{"nats://x"}}.withDefaults()
	if c.LeaseTTL != 10*time.Second || c.RenewInterval != 3*time.Second {
		t.Errorf("defaults LeaseTTL=%v RenewInterval=%v, want 10s 3s", c.LeaseTTL, c.RenewInterval)
	}
	if c.Logger == nil || c.Bucket.Replicas != 1 || c.SafetyMargin != time.Second || c.RequestTimeout != 3*time.Second ||
		c.DrainTimeout != 10*time.Second || c.Cooldown != 10*time.Second {
		t.Errorf("defaults: %+v", c)
	}
	if err := c.validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
	// A short TTL alone gets a RenewInterval that fits it.
	short := Config{ClusterID: "c", NodeID: "n", NATSURLs: []string{"nats://x"}, LeaseTTL: wire.MinLeaseTTL}
	if err := short.check(); err != nil {
		t.Errorf("LeaseTTL %v with default RenewInterval: %v", wire.MinLeaseTTL, err)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	good := Config{ClusterID: "c", NodeID: "n", NATSURLs: []string{"nats://x"}}
	cases := []struct {
		name  string
		mod   func(*Config)
		field string // the error must name it; "" means valid
	}{
		{"valid", func(*Config) {}, ""},
		{"conn instead of urls", func(c *Config) { c.NATSURLs = nil; c.Conn = &nats.Conn{} }, ""},
		{"min ttl", func(c *Config) { c.LeaseTTL, c.RenewInterval = 500*time.Millisecond, 150*time.Millisecond }, ""},
		{"empty cluster", func(c *Config) { c.ClusterID = "" }, "ClusterID"},
		{"empty node", func(c *Config) { c.NodeID = "" }, "NodeID"},
		{"wildcard star", func(c *Config) { c.ClusterID = "a*" }, "ClusterID"},
		{"wildcard gt", func(c *Config) { c.NodeID = ">" }, "NodeID"},
		{"dot", func(c *Config) { c.ClusterID = "a.b" }, "ClusterID"},
		{"space", func(c *Config) { c.NodeID = "node 1" }, "NodeID"},
		{"tab", func(c *Config) { c.NodeID = "node\t1" }, "NodeID"},
		{"slash", func(c *Config) { c.NodeID = "a/b" }, "NodeID"},
		{"non-utf8", func(c *Config) { c.NodeID = "a\xff" }, "NodeID"},
		{"unicode", func(c *Config) { c.NodeID = "nöde" }, "NodeID"},
		{"too long", func(c *Config) { c.NodeID = strings.Repeat("a", wire.MaxNodeIDLen+1) }, "NodeID"},
		{"cluster too long", func(c *Config) { c.ClusterID = strings.Repeat("a", wire.MaxIdentifierLen+1) }, "ClusterID"},
		{"host name", func(c *Config) { c.NodeID = "db1.example.com" }, ""},
		{"empty label", func(c *Config) { c.NodeID = "db1..example.com" }, "NodeID"},
		{"trailing dot", func(c *Config) { c.NodeID = "db1.example.com." }, "NodeID"},
		{"no urls", func(c *Config) { c.NATSURLs = nil }, "NATSURLs"},
		{"empty url", func(c *Config) { c.NATSURLs = []string{"nats://x", ""} }, "NATSURLs[1]"},
		{"ttl too short", func(c *Config) { c.LeaseTTL = 100 * time.Millisecond }, "LeaseTTL"},
		{"renew too slow", func(c *Config) { c.LeaseTTL, c.RenewInterval = 3*time.Second, 2*time.Second }, "RenewInterval"},
		{"renew negative", func(c *Config) { c.RenewInterval = -time.Second }, "RenewInterval"},
		{"margin too big", func(c *Config) { c.SafetyMargin = 6 * time.Second }, "SafetyMargin"},
		{"request timeout too big", func(c *Config) { c.RequestTimeout = 20 * time.Second }, "RequestTimeout"},
		{"negative drain", func(c *Config) { c.DrainTimeout = -1 }, "DrainTimeout"},
		{"negative cooldown", func(c *Config) { c.Cooldown = -1 }, "Cooldown"},
		{"preempt delay longer than the ttl", func(c *Config) { c.PreemptDelay = 5 * time.Minute }, ""},
		{"negative preempt delay", func(c *Config) { c.PreemptDelay = -time.Second }, "PreemptDelay"},
		{"preempt delay too long", func(c *Config) { c.PreemptDelay = wire.MaxLeaseTTL + time.Second }, "PreemptDelay"},
		{"negative preempt delay with a bad ttl", func(c *Config) { c.LeaseTTL, c.PreemptDelay = time.Millisecond, -1 }, "PreemptDelay"},
		{"replicas", func(c *Config) { c.Bucket.Replicas = 7 }, "Bucket.Replicas"},
		{"bucket lease ttl", func(c *Config) { c.Bucket.LeaseTTL = 2 * time.Second }, "Bucket.LeaseTTL"},
		{"memory", func(c *Config) { c.Bucket.Storage = jetstream.MemoryStorage }, ""},
		{"placement", func(c *Config) { c.Bucket.Placement = &jetstream.Placement{Cluster: "east", Tags: []string{"az:1"}} }, ""},
		{"storage", func(c *Config) { c.Bucket.Storage = 7 }, "Bucket.Storage"},
		{"empty placement", func(c *Config) { c.Bucket.Placement = &jetstream.Placement{} }, "Bucket.Placement"},
		{"placement cluster space", func(c *Config) { c.Bucket.Placement = &jetstream.Placement{Cluster: "a b"} }, "Bucket.Placement.Cluster"},
		{"placement empty tag", func(c *Config) { c.Bucket.Placement = &jetstream.Placement{Tags: []string{"x", " "}} }, "Bucket.Placement.Tags[1]"},
		{"domain", func(c *Config) { c.JetStreamDomain = "hub" }, ""},
		{"api prefix", func(c *Config) { c.JetStreamAPIPrefix = "JS.acc.API." }, ""},
		{"domain and prefix", func(c *Config) { c.JetStreamDomain, c.JetStreamAPIPrefix = "hub", "JS.acc.API" }, "JetStreamAPIPrefix"},
		{"domain with dot", func(c *Config) { c.JetStreamDomain = "a.b" }, "JetStreamDomain"},
		{"domain with space", func(c *Config) { c.JetStreamDomain = "a b" }, "JetStreamDomain"},
		{"prefix wildcard", func(c *Config) { c.JetStreamAPIPrefix = "$JS.*.API" }, "JetStreamAPIPrefix"},
		{"prefix empty token", func(c *Config) { c.JetStreamAPIPrefix = "JS..API" }, "JetStreamAPIPrefix"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.mod(&c)
			err := c.check()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %s", err, tc.field)
			}
			if _, nerr := NewNode(c, nil); !errors.Is(nerr, ErrInvalidConfig) {
				t.Errorf("NewNode accepted it: %v", nerr)
			}
		})
	}
}

func TestValidateIdentifier(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a", "node-1", "Node_2", strings.Repeat("x", wire.MaxIdentifierLen)} {
		if err := wire.CheckIdentifier("ClusterID", ok); err != nil {
			t.Errorf("%q rejected: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "*", ">", "a.b", "a b", "a\nb", "ä", "\x00", strings.Repeat("x", wire.MaxIdentifierLen+1)} {
		err := wire.CheckIdentifier("ClusterID", bad)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "ClusterID") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

// Connection settings and hooks that cannot work are refused before
// Start, each with an error naming its field.
func TestConnectionSettingsRefusedByValidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := Config{ClusterID: "c", NodeID: "n", NATSURLs: []string{"nats://127.0.0.1:4222"}}
	for _, tc := range []struct {
		name  string
		mod   func(*Config)
		field string
	}{
		{"conn and urls", func(c *Config) { c.Conn = &nats.Conn{} }, "Conn and NATSURLs"},
		{"port not a number", func(c *Config) { c.NATSURLs = []string{"nats://127.0.0.1:notaport"} }, "NATSURLs[0]"},
		{"bad escape", func(c *Config) { c.NATSURLs = []string{"nats://127.0.0.1:1", "nats://%zz"} }, "NATSURLs[1]"},
		{"no host", func(c *Config) { c.NATSURLs = []string{"nats://"} }, "NATSURLs[0]"},
		{"blank", func(c *Config) { c.NATSURLs = []string{"  "} }, "NATSURLs[0]"},
		{"missing creds", func(c *Config) { c.NATSCredentials = filepath.Join(dir, "none.creds") }, "NATSCredentials"},
		{"creds a directory", func(c *Config) { c.NATSCredentials = dir }, "NATSCredentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.mod(&c)
			checkInvalid(t, c, tc.field)
		})
	}
	// "host:port" without a scheme is what nats.go dials as nats://.
	if err := (Config{ClusterID: "c", NodeID: "n", NATSURLs: []string{"127.0.0.1:4222", "tls://h:1"}}).check(); err != nil {
		t.Errorf("URLs nats.go accepts: %v", err)
	}
}

// A nil pointer of a concrete type is not nil as Hooks: its methods would
// fail at the first election. Nil itself means no hooks.
func TestNilHooksRefused(t *testing.T) {
	t.Parallel()
	cfg := Config{ClusterID: "c", NodeID: "n", NATSURLs: []string{"nats://127.0.0.1:4222"}}
	var typedNil *countingHooks
	for name, h := range map[string]Hooks{"typed nil": typedNil, "typed nil composed": ComposeHooks(NoOpHooks{}, typedNil)} {
		if _, err := NewNode(cfg, h); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "hooks") {
			t.Errorf("NewNode with %s hooks = %v, want ErrInvalidConfig naming hooks", name, err)
		}
		if _, err := NewObserver(cfg, h); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewObserver with %s hooks = %v", name, err)
		}
	}
	for name, h := range map[string]Hooks{"nil": nil, "NoOpHooks": NoOpHooks{}, "HookFuncs": HookFuncs{}, "composed": ComposeHooks(nil, NoOpHooks{})} {
		if _, err := NewNode(cfg, h); err != nil {
			t.Errorf("NewNode with %s hooks: %v", name, err)
		}
	}
}

// Every problem is reported at once, each naming its field, and the
// whole still wraps ErrInvalidConfig.
func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	c := Config{ClusterID: "a b", NodeID: "n", NATSURLs: []string{"nats://127.0.0.1:notaport"}, Cooldown: -time.Second}
	err := c.check()
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Validate = %v, want ErrInvalidConfig", err)
	}
	for _, field := range []string{"ClusterID", "NATSURLs[0]", "Cooldown"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 3 {
		t.Errorf("error %q: want 3 problems, each its own error", err)
	}
	for _, e := range joined.Unwrap() {
		if !errors.Is(e, ErrInvalidConfig) {
			t.Errorf("problem %q does not wrap ErrInvalidConfig", e)
		}
	}
	if _, nerr := NewNode(c, nil); nerr == nil || nerr.Error() != err.Error() {
		t.Errorf("NewNode = %v, want the same problems as Validate", nerr)
	}
}

// countingHooks counts elections: a Hooks whose methods read its fields.
type countingHooks struct{ becomes int }

func (h *countingHooks) OnBecomeLeader(context.Context) error         { h.becomes++; return nil }
func (h *countingHooks) OnLoseLeadership(context.Context) error       { return nil }
func (h *countingHooks) OnLeaderChange(context.Context, string) error { return nil }
