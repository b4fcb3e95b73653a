package cluster

// Fuzz targets for everything the core decodes or validates from outside:
// the lease record read from KV, identifiers, and Config. Each asserts
// properties (no panic, round trip, documented errors), not just a call.
//
//	go test -run='^$' -fuzz='^FuzzDecodeLease$' -fuzztime=10s .
//	go test -run='^$' -fuzz='^FuzzValidateIdentifier$' -fuzztime=10s .
//	go test -run='^$' -fuzz='^FuzzValidateNodeID$' -fuzztime=10s .
//	go test -run='^$' -fuzz='^FuzzNodeIDToken$' -fuzztime=10s .
//	go test -run='^$' -fuzz='^FuzzConfigValidate$' -fuzztime=10s .
//	go test -run='^$' -fuzz='^FuzzDecodeStepDown$' -fuzztime=10s .

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// FuzzDecodeLease feeds arbitrary bytes to decodeLease, as any client with
// write access to the bucket can. Properties:
//   - it never panics, and a value over wire.MaxLeaseSize is always rejected;
//   - a rejected value yields the zero Lease;
//   - an accepted value satisfies the record's rules (valid node_id or
//     released, epoch >= 0, held => epoch > 0, ttl_ms in range), carries the
//     revision, and round-trips: its encoding decodes to a record whose
//     encoding is byte-identical;
//   - the election can write a record derived from it: a released record
//     keeping its acquired_at (releaseStale does this, in UTC) encodes.
func FuzzDecodeLease(f *testing.F) {
	for _, s := range []string{
		`{"node_id":"node-1","epoch":5,"expires_at":"2024-01-15T10:30:00Z","acquired_at":"2024-01-15T10:29:50Z"}`,
		`{"node_id":"node-1","epoch":5,"expires_at":"2024-01-15T10:30:00Z","acquired_at":"2024-01-15T10:29:50Z","ttl_ms":10000}`,
		`{"node_id":"","epoch":3,"expires_at":"2024-01-15T10:30:00+02:00","acquired_at":"0001-01-01T00:00:00Z"}`,
		`{"node_id":"a","epoch":9223372036854775807}`,
		`{"node_id":"a","epoch":1,"ttl_ms":86400000}`,
		`{"node_id":"a","epoch":1,"ttl_ms":86400001}`,
		`{"node_id":"a","epoch":-1}`,
		`{"node_id":"a","epoch":0}`,
		`{"node_id":"a.b","epoch":1}`,
		`{"node_id":"db1.example.com","epoch":1,"next":"db2.example.com"}`,
		`{"node_id":"","epoch":4,"next":"db2.example.com"}`,
		`{"node_id":"a..b","epoch":1}`,
		`{"node_id":".a","epoch":1}`,
		`{"node_id":"a","epoch":1,"next":"b."}`,
		`{"node_id":"a=b","epoch":1}`,
		`{"node_id":"a","epoch":1e3}`,
		`{"node_id":"a","epoch":"5"}`,
		`{"node_id":"a","node_id":"b","epoch":2}`,
		`{"NODE_ID":"a","Epoch":2}`,
		`{"node_id":"a","epoch":1,"acquired_at":"2024-01-15T10:29:50.123456789-23:59"}`,
		`{"node_id":"a","epoch":1,"acquired_at":"9999-12-31T20:00:00-01:00"}`,
		`{"node_id":"a","epoch":1,"expires_at":"0000-01-01T02:00:00+01:00"}`,
		`{"node_id":"\u00e9","epoch":1}`,
		"{\"node_id\":\"a\xff\",\"epoch\":1}",
		`null`, `[]`, `{}`, `"x"`, `{not json`, ``, ` `,
		`{"node_id":"a","epoch":1}` + strings.Repeat(" ", wire.MaxLeaseSize),
	} {
		f.Add([]byte(s), uint64(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, rev uint64) {
		l, err := decodeLease(data, rev)
		if err != nil {
			if !reflect.DeepEqual(l, Lease{}) {
				t.Fatalf("rejected %q (%v) but returned %+v", data, err, l)
			}
			return
		}
		if len(data) > wire.MaxLeaseSize {
			t.Fatalf("accepted a %d-byte value, over wire.MaxLeaseSize", len(data))
		}
		checkLeaseRules(t, l, rev)
		enc, err := encodeLease(l)
		if err != nil {
			t.Fatalf("decoded %q to %+v, which does not encode: %v", data, l, err)
		}
		l2, err := decodeLease(enc, rev)
		if err != nil {
			t.Fatalf("re-encoded lease %s does not decode: %v", enc, err)
		}
		enc2, err := encodeLease(l2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("round trip changed the record:\n %s\n %s (%v)", enc, enc2, err)
		}
		if l2.NodeID != l.NodeID || l2.Epoch != l.Epoch || l2.TTLMillis != l.TTLMillis ||
			!l2.AcquiredAt.Equal(l.AcquiredAt) || !l2.ExpiresAt.Equal(l.ExpiresAt) {
			t.Fatalf("round trip changed fields: %+v -> %+v", l, l2)
		}
		// What releaseStale writes back for a record naming this node.
		released := Lease{Epoch: l.Epoch, AcquiredAt: l.AcquiredAt.UTC(), ExpiresAt: time.Now().UTC()}
		if _, err := encodeLease(released); err != nil {
			t.Fatalf("accepted lease %q has acquired_at %v, which cannot be written back in UTC: %v", data, l.AcquiredAt, err)
		}
		// The epochs that follow l.Epoch and rev: internal/election's
		// FuzzNextEpoch and FuzzJudgeRange.
	})
}

// checkLeaseRules asserts the rules an accepted lease record obeys.
func checkLeaseRules(t *testing.T, l Lease, rev uint64) {
	t.Helper()
	if l.Revision != rev {
		t.Fatalf("revision %d, want %d", l.Revision, rev)
	}
	if l.Epoch < 0 {
		t.Fatalf("accepted negative epoch %d", l.Epoch)
	}
	if l.TTLMillis < 0 || l.TTLMillis > int64(24*time.Hour/time.Millisecond) {
		t.Fatalf("accepted ttl_ms %d", l.TTLMillis)
	}
	if l.Next != "" {
		if err := wire.CheckNodeID("next", l.Next); err != nil {
			t.Fatalf("accepted next %q: %v", l.Next, err)
		}
	}
	if l.NodeID != "" {
		if err := wire.CheckNodeID("node_id", l.NodeID); err != nil {
			t.Fatalf("accepted node_id %q: %v", l.NodeID, err)
		}
		if l.Epoch == 0 {
			t.Fatalf("accepted held lease with epoch 0")
		}
	}
}

// identifierOracle is the documented rule of a ClusterID, written
// independently of wire.CheckIdentifier.
var identifierOracle = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// nodeIDOracle is the documented rule of a NodeID, written independently
// of wire.CheckNodeID: labels of letters, digits, '-' and '_' between single
// dots, at most 253 bytes.
func nodeIDOracle(s string) bool { return len(s) <= 253 && nodeIDPattern.MatchString(s) }

var nodeIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

// kvKeyValid is the key check of nats.go's jetstream KV (kv.go, keyValid,
// v1.55.0), copied: the client refuses any other key.
func kvKeyValid(key string) bool {
	if key == "" || key[0] == '.' || key[len(key)-1] == '.' || strings.Contains(key, "..") {
		return false
	}
	return kvKeyPattern.MatchString(key)
}

var kvKeyPattern = regexp.MustCompile(`^[-/_=\.a-zA-Z0-9]+$`)

// FuzzValidateIdentifier checks wire.CheckIdentifier against the documented
// rule of a ClusterID, and that an accepted one is safe where it is used:
// one NATS subject token and a KV bucket name.
func FuzzValidateIdentifier(f *testing.F) {
	for _, s := range []string{
		"node-1", "a", "A_b-9", strings.Repeat("x", 64), strings.Repeat("x", 65),
		"", "*", ">", "a.b", ".", "a b", " a", "a\t", "a\n", "a/b", "a\\b", "$SYS", "a\x00",
		"\xff", "nöde", "ⅰ", "a*b", "a>", "%", "a:b", "\u200b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := wire.CheckIdentifier("ClusterID", s)
		want := identifierOracle.MatchString(s)
		if (err == nil) != want {
			t.Fatalf("ValidateIdentifier(%q) = %v, documented rule says valid=%v", s, err, want)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
			}
			if !strings.Contains(err.Error(), "ClusterID") {
				t.Fatalf("error %q does not name the field", err)
			}
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error message is not valid UTF-8: %q", err)
			}
			return
		}
		// Accepted: a single subject token, a valid bucket name and key.
		subject := "cluster." + s + ".health"
		if n := len(strings.Split(subject, ".")); n != 3 || strings.ContainsAny(s, "*> \t\r\n") {
			t.Fatalf("identifier %q does not make one subject token", s)
		}
		if !regexp.MustCompile(`^[a-zA-Z0-9_-]+$`).MatchString(wire.BucketName(s)) {
			t.Fatalf("bucket name %q is not valid", wire.BucketName(s))
		}
		// Every ClusterID is a NodeID too, and its own token: the subjects
		// and keys of nodes named before dots were allowed are unchanged.
		if err := wire.CheckNodeID("NodeID", s); err != nil || wire.NodeIDToken(s) != s {
			t.Fatalf("identifier %q: wire.CheckNodeID %v, token %q", s, err, wire.NodeIDToken(s))
		}
	})
}

// FuzzValidateNodeID checks wire.CheckNodeID against the documented rule,
// and that an accepted NodeID is safe where it is used: its token is one
// NATS subject token with no wildcard, the cooldown key is a valid KV key
// without '.', the token gives the NodeID back, and wire.NodeControlSubject
// has exactly the documented tokens.
func FuzzValidateNodeID(f *testing.F) {
	for _, s := range []string{
		"node-1", "a", "db1.example.com", "ip-10-0-0-1.eu-west-1.compute.internal", "node_1.rack-2", "A.b_C.9-",
		strings.Repeat("x", 253), strings.Repeat("x", 254), strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 127),
		"", "*", ">", "a.*", "a.>", "*.a", ".", "..", ".a", "a.", "a..b", "a b", "a\t.b", "a=b", "a/b", "a\\b",
		"$SYS", "a\x00", "\xff", "nöde.x", "a．b", "a:b", "\u200b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := wire.CheckNodeID("NodeID", s)
		if want := nodeIDOracle(s); (err == nil) != want {
			t.Fatalf("ValidateNodeID(%q) = %v, documented rule says valid=%v", s, err, want)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "NodeID") || !utf8.ValidString(err.Error()) {
				t.Fatalf("error %q: want ErrInvalidConfig, naming NodeID, valid UTF-8", err)
			}
			return
		}
		tok := wire.NodeIDToken(s)
		if tok == "" || strings.ContainsAny(tok, ".*> \t\r\n") {
			t.Fatalf("NodeID %q has token %q, not one subject token", s, tok)
		}
		if got := strings.Split(wire.NodeControlSubject("c", s), "."); len(got) != 5 || got[3] != tok {
			t.Fatalf("NodeControlSubject(c, %q) has tokens %q", s, got)
		}
		if k := wire.CooldownKey(s); !kvKeyValid(k) || strings.Contains(k, ".") {
			t.Fatalf("cooldown key %q is not a KV key without '.'", k)
		}
		back, err := wire.NodeIDFromToken(tok)
		if err != nil || back != s {
			t.Fatalf("NodeIDFromToken(%q) = %q, %v; want %q", tok, back, err, s)
		}
	})
}

// FuzzNodeIDToken checks that the mapping from NodeIDs to tokens is
// injective, and wire.NodeIDFromToken its exact inverse:
//   - two different valid NodeIDs never share a token;
//   - any string wire.NodeIDFromToken accepts is the token of the NodeID it
//     returns, so no token stands for two NodeIDs, and a token of anything
//     but a valid NodeID is refused.
func FuzzNodeIDToken(f *testing.F) {
	for _, p := range [][2]string{
		{"db1.example.com", "db1=example=com"}, {"a.b", "a_b"}, {"a.b", "a-b"}, {"a_b", "a=b"}, {"a.b", "a=b"},
		{"a", "a"}, {"a.b.c", "a.b=c"}, {"=a", "a="}, {"a..b", "a==b"}, {"", "="}, {"a b", "a.b"},
	} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if wire.CheckNodeID("a", a) == nil && wire.CheckNodeID("b", b) == nil && a != b && wire.NodeIDToken(a) == wire.NodeIDToken(b) {
			t.Fatalf("NodeIDs %q and %q share the token %q", a, b, wire.NodeIDToken(a))
		}
		for _, tok := range []string{a, b} {
			id, err := wire.NodeIDFromToken(tok)
			if err != nil {
				if !errors.Is(err, ErrInvalidConfig) || id != "" {
					t.Fatalf("NodeIDFromToken(%q) = %q, %v; want \"\" and ErrInvalidConfig", tok, id, err)
				}
				continue
			}
			if verr := wire.CheckNodeID("NodeID", id); verr != nil || wire.NodeIDToken(id) != tok {
				t.Fatalf("NodeIDFromToken(%q) = %q (valid: %v), whose token is %q", tok, id, verr, wire.NodeIDToken(id))
			}
		}
	})
}

// FuzzConfigValidate checks Config.check (what NewNode returns) against the documented rules
// (defaults first, then ranges), written independently; that it agrees with
// NewNode; that every error wraps ErrInvalidConfig and names a field; and
// that an accepted Config, with its defaults, keeps the timing invariants
// the protocol relies on.
func FuzzConfigValidate(f *testing.F) {
	s, ms := int64(time.Second), int64(time.Millisecond)
	f.Add("c", "n", "nats://127.0.0.1:4222", int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), 0)
	f.Add("c", "n", "nats://x", 10*s, 3*s, s, 3*s, 10*s, 10*s, 3)
	f.Add("c", "n", "nats://x", 500*ms, 150*ms, 0*s, 0*s, 0*s, 0*s, 1)
	f.Add("c", "n", "", 0*s, 0*s, 0*s, 0*s, 0*s, 0*s, 0)
	f.Add("a.b", "n", "nats://x", 0*s, 0*s, 0*s, 0*s, 0*s, 0*s, 0)
	f.Add("c", "db1.example.com", "nats://x", 0*s, 0*s, 0*s, 0*s, 0*s, 0*s, 0)
	f.Add("c", "db1..example.com", "nats://x", 0*s, 0*s, 0*s, 0*s, 0*s, 0*s, 0)
	f.Add("c", ">", "nats://x", 0*s, 0*s, 0*s, 0*s, 0*s, 0*s, 0)
	f.Add("c", "n", "nats://x", -s, 0*s, 0*s, 0*s, 0*s, 0*s, 0)
	f.Add("c", "n", "nats://x", 10*s, 4*s, 0*s, 0*s, 0*s, 0*s, 6)
	f.Add("c", "n", "nats://x", 10*s, -s, 6*s, 20*s, int64(-1), int64(-1), -1)
	f.Add("c", "n", "nats://x", int64(math.MaxInt64), int64(math.MaxInt64/3), 0*s, 0*s, 0*s, 0*s, 0)
	f.Add("c", "n", "nats://x", 10*s, int64(math.MaxInt64/3)+1, 0*s, s, 0*s, 0*s, 0)
	f.Fuzz(func(t *testing.T, clusterID, nodeID, url string, ttl, renew, margin, reqTimeout, drain, cooldown int64, replicas int) {
		cfg := Config{
			ClusterID: clusterID, NodeID: nodeID, NATSURLs: []string{url},
			LeaseTTL: time.Duration(ttl), RenewInterval: time.Duration(renew), SafetyMargin: time.Duration(margin),
			RequestTimeout: time.Duration(reqTimeout), DrainTimeout: time.Duration(drain), Cooldown: time.Duration(cooldown),
			Bucket: BucketOptions{Replicas: replicas}, Logger: testLogger(),
		}
		err := cfg.check()
		field, want := configOracle(cfg)
		if (err == nil) != want {
			t.Fatalf("Validate(%+v) = %v; documented rules say valid=%v (field %s)", cfg, err, want, field)
		}
		n, nerr := NewNode(cfg, nil)
		if (nerr == nil) != (err == nil) {
			t.Fatalf("Validate says %v but NewNode says %v", err, nerr)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
			}
			if !strings.Contains(err.Error(), field) {
				t.Fatalf("error %q does not name %s", err, field)
			}
			return
		}
		c := n.Config()
		if c.LeaseTTL < wire.MinLeaseTTL || c.RenewInterval <= 0 || c.RenewInterval > c.LeaseTTL/3 ||
			c.SafetyMargin < 0 || c.SafetyMargin > c.LeaseTTL/2 || c.RequestTimeout > c.LeaseTTL-c.SafetyMargin ||
			c.Bucket.Replicas < 1 || c.Bucket.Replicas > 5 || c.Logger == nil {
			t.Fatalf("accepted config breaks the timing invariants: %+v", c)
		}
		if err := c.check(); err != nil {
			t.Fatalf("the config NewNode uses does not validate: %v", err)
		}
	})
}

// configOracle applies the documented defaults and rules of Config and
// returns whether cfg is valid, or the field that is not.
func configOracle(c Config) (field string, valid bool) {
	if c.LeaseTTL == 0 {
		c.LeaseTTL = wire.DefaultLeaseTTL
	}
	if c.RenewInterval == 0 {
		c.RenewInterval = wire.DefaultRenewInterval
		if c.LeaseTTL < 3*wire.DefaultRenewInterval {
			c.RenewInterval = c.LeaseTTL / 4
		}
	}
	if c.SafetyMargin == 0 {
		c.SafetyMargin = c.LeaseTTL / 10
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = c.RenewInterval
	}
	if c.Bucket.Replicas == 0 {
		c.Bucket.Replicas = 1
	}
	switch {
	case !identifierOracle.MatchString(c.ClusterID):
		return "ClusterID", false
	case !nodeIDOracle(c.NodeID):
		return "NodeID", false
	case c.Conn == nil && len(c.NATSURLs) == 0:
		return "NATSURLs", false
	case len(c.NATSURLs) > 0 && !serverURLOracle(c.NATSURLs[0]):
		return "NATSURLs[0]", false
	case c.LeaseTTL < wire.MinLeaseTTL || c.LeaseTTL > 24*time.Hour:
		return "LeaseTTL", false
	// At most LeaseTTL/3, in exact arithmetic (no overflow).
	case c.RenewInterval <= 0 || c.RenewInterval > c.LeaseTTL/3:
		return "RenewInterval", false
	case c.SafetyMargin < 0 || c.SafetyMargin > c.LeaseTTL/2:
		return "SafetyMargin", false
	case c.RequestTimeout < 0 || c.RequestTimeout > c.LeaseTTL-c.SafetyMargin:
		return "RequestTimeout", false
	case c.DrainTimeout < 0:
		return "DrainTimeout", false
	case c.Cooldown < 0:
		return "Cooldown", false
	case c.Bucket.Replicas < 1 || c.Bucket.Replicas > 5:
		return "Bucket.Replicas", false
	}
	return "", true
}

// FuzzDecodeStepDown feeds arbitrary payloads to the decoder of remote
// step-down requests (anyone allowed to publish on the control subjects can
// send one). Properties: no panic; over wire.MaxControlRequestSize is refused;
// an accepted request names a valid successor or none, has a known reason,
// and round-trips.
//
//	go test -run='^$' -fuzz='^FuzzDecodeStepDown$' -fuzztime=10s .
func FuzzDecodeStepDown(f *testing.F) {
	for _, s := range []string{
		``, ` `, `{}`, `{"to":"n2"}`, `{"reason":"priority","priority":3}`, `{"reason":"operator","to":"n-1_x"}`,
		`{"to":"a.b"}`, `{"to":"db2.example.com"}`, `{"to":"a..b"}`, `{"to":"a."}`, `{"to":">"}`, `{"reason":"coup"}`, `{"priority":-1,"reason":"priority"}`, `null`, `[]`, `"x"`,
		`{"to":""}`, "{\"to\":\"\xff\"}", `{"to":1}`, `{` + strings.Repeat(" ", wire.MaxControlRequestSize) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := wire.DecodeStepDown(data)
		if err != nil {
			return
		}
		if len(data) > wire.MaxControlRequestSize {
			t.Fatalf("accepted a %d-byte request", len(data))
		}
		if req.To != "" {
			if err := wire.CheckNodeID("to", req.To); err != nil {
				t.Fatalf("accepted successor %q: %v", req.To, err)
			}
		}
		if req.Reason != wire.ReasonOperator && req.Reason != wire.ReasonPriority {
			t.Fatalf("accepted reason %q", req.Reason)
		}
		enc, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		again, err := wire.DecodeStepDown(enc)
		if err != nil || again != req {
			t.Fatalf("round trip: %+v -> %s -> %+v (%v)", req, enc, again, err)
		}
	})
}

// serverURLOracle is the documented rule of a server URL: what nats.go
// dials, "nats://" added when there is no scheme, must parse as a URL with
// a host.
func serverURLOracle(s string) bool {
	if strings.TrimSpace(s) == "" {
		return false
	}
	full := s
	if !strings.Contains(s, "://") {
		full = "nats://" + s
	}
	u, err := url.Parse(full)
	return err == nil && u.Host != ""
}
