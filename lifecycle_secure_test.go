package cluster_test

// Secured NATS: nodes and health checkers over mutual TLS with NKey users,
// and with .creds files in operator (JWT) mode; a user restricted to one
// cluster runs a node and cannot disturb another cluster; and the minimal
// permission set of securetest.NodePermissions is enough and, entry by
// entry, necessary.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/securetest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// userPass adds a config-mode user and returns its client option.
func userPass(opts *server.Options, name string, perms *securetest.Permissions) nats.Option {
	u := &server.User{Username: name, Password: name + "-pw"}
	if perms != nil {
		u.Permissions = perms.Server()
	}
	opts.Users = append(opts.Users, u)
	return nats.UserInfo(u.Username, u.Password)
}

func serverURL(ns *server.Server, scheme string) string {
	return fmt.Sprintf("%s://%s", scheme, ns.Addr().String())
}

func TestMinimalPermissionsAreEnough(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	// Host names as NodeIDs: their subjects and cooldown key carry the
	// NodeID's token, and the permissions name exactly those.
	for _, c := range []struct{ name, inbox, id1, id2 string }{
		{"_INBOX", "_INBOX", "n1", "n2"},
		{"_INBOX_perm-ok", "_INBOX_perm-ok", "n1", "n2"},
		{"hostnames", "_INBOX", "db1.example.com", "db2.example.com"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := "perm-ok"
			var admin, n1, n2 nats.Option
			ns := securetest.RunServer(t, func(o *server.Options) {
				admin = userPass(o, "admin", nil)
				p1 := securetest.NodePermissions(id, c.id1, c.inbox, true)
				p2 := securetest.NodePermissions(id, c.id2, c.inbox, false)
				n1, n2 = userPass(o, "n1", &p1), userPass(o, "n2", &p2)
			})
			prefix := nats.CustomInboxPrefix(c.inbox)
			s := securetest.Scenario{
				ClusterID: id, URL: serverURL(ns, "nats"), Admin: []nats.Option{admin},
				Members: [2]securetest.Member{{ID: c.id1, Options: []nats.Option{n1, prefix}}, {ID: c.id2, Options: []nats.Option{n2, prefix}}},
			}
			if err := s.Run(t); err != nil {
				t.Fatalf("a node with the minimal permissions: %v", err)
			}
		})
	}
}

// TestEachMinimalPermissionIsNecessary removes one entry at a time (from
// both nodes; the bucket-creation entries from the creator) and checks that
// the scenario then fails because the server refused something: a
// permission violation on a node's connection, or a Start that says
// permission denied. A case that fails without a refusal (for want of time
// under load) proves nothing either way and is run again, up to
// necessaryAttempts times: a failure for another reason must not hide an
// entry that is not needed. An optional entry (the member record's, or
// one that only creates) is not necessary: without it the scenario runs
// whole, the nodes at most announce nothing. The cases run side by side, each its own cluster and users on
// one server.
func TestEachMinimalPermissionIsNecessary(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	type removal struct {
		name     string
		n1, n2   func(p securetest.Permissions) securetest.Permissions
		optional bool
	}
	full := securetest.NodePermissions("x", "n1", "_INBOX", true)
	var cases []removal
	for i := range full.Publish {
		cases = append(cases, removal{name: "publish " + full.Publish[i], n1: dropPub(i), n2: dropPub(i), optional: full.IsOptional(full.Publish[i])})
	}
	for i := range full.Subscribe {
		cases = append(cases, removal{name: "subscribe " + full.Subscribe[i], n1: dropSub(i), n2: dropSub(i)})
	}
	cases = append(cases, removal{name: "allow_responses", n1: noResponses, n2: noResponses})

	// Each attempt of each case has its own cluster ID and users: a
	// second attempt starts from nothing the first left.
	var admin nats.Option
	users := map[string][2]nats.Option{}
	caseID := func(k, attempt int) string { return fmt.Sprintf("perm%d-%d", k, attempt) }
	ns := securetest.RunServer(t, func(o *server.Options) {
		admin = userPass(o, "admin", nil)
		for k, c := range cases {
			for attempt := range necessaryAttempts {
				id := caseID(k, attempt)
				p1 := c.n1(securetest.NodePermissions(id, "n1", "_INBOX", true))
				p2 := c.n2(securetest.NodePermissions(id, "n2", "_INBOX", false))
				users[id] = [2]nats.Option{userPass(o, id+"-n1", &p1), userPass(o, id+"-n2", &p2)}
			}
		}
	})
	// The account's bucket exists, as one node of any cluster made it: a
	// case without the right to create it is not then a case without the
	// right to announce.
	nc, err := nats.Connect(serverURL(ns, "nats"), admin)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.CreateKeyValue(context.Background(), store.AccountBucketConfig(store.Options{})); err != nil {
		t.Fatal(err)
	}
	t.Run("cases", func(t *testing.T) {
		for k, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				scenario := func(attempt int) securetest.Scenario {
					id := caseID(k, attempt)
					u := users[id]
					return securetest.Scenario{
						ClusterID: id, URL: serverURL(ns, "nats"), Admin: []nats.Option{admin}, StartTimeout: 2 * time.Second,
						Members: [2]securetest.Member{{ID: "n1", Options: []nats.Option{u[0]}}, {ID: "n2", Options: []nats.Option{u[1]}}},
					}
				}
				if c.optional {
					// The nodes dial their own connections: the refusal they
					// only log must not fail the scenario.
					// Without the members bucket's entries nothing is announced;
					// without its own status subject a node only cannot ask, at
					// Start, whether a process with its NodeID runs (rule 48).
					// Without the right to create the account's bucket or
					// the ceiling the nodes announce all the same: the
					// bucket was made before (below).
					s := scenario(0)
					s.Dial = true
					s.Unannounced = strings.Contains(c.name, "STREAM.INFO."+wire.KVStream(wire.AccountBucketName)) ||
						strings.Contains(c.name, wire.KVSubject(wire.AccountBucketName, "members."))
					if err := s.Run(t); err != nil {
						t.Errorf("without the optional %s: %v", c.name, err)
					} else {
						t.Logf("without the optional %s: elected (announced: %v)", c.name, !s.Unannounced)
					}
					return
				}
				for attempt := range necessaryAttempts {
					s := scenario(attempt)
					s.Refusals = &securetest.Refusals{}
					err := s.Run(t)
					if err == nil {
						t.Fatalf("without %s everything still worked: the entry is not necessary", c.name)
					}
					if refused(err, s.Refusals) {
						t.Logf("without %s: %v", c.name, firstLine(err))
						return
					}
					t.Logf("without %s, attempt %d failed, but nothing was refused: %v", c.name, attempt+1, firstLine(err))
				}
				t.Errorf("without %s the scenario failed %d times, never for a refusal: not shown necessary", c.name, necessaryAttempts)
			})
		}
	})
}

// necessaryAttempts is how many times TestEachMinimalPermissionIsNecessary
// runs a case that fails without a refusal.
const necessaryAttempts = 3

// refused reports whether a scenario's failure came from the server's
// refusal: its error says permission denied or violation, or a member's
// connection was told of a violation (the asynchronous error may come a
// moment after the failure it caused).
func refused(err error, r *securetest.Refusals) bool {
	if errors.Is(err, cluster.ErrPermissionDenied) || errors.Is(err, nats.ErrPermissionViolation) ||
		strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
		return true
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(r.Violations()) == 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// dropPub removes the i-th publish entry (the entries of NodePermissions
// are in the same order for every cluster and node; those only a creator
// has come last, so a node that does not create has fewer).
func dropPub(i int) func(securetest.Permissions) securetest.Permissions {
	return func(p securetest.Permissions) securetest.Permissions {
		if i >= len(p.Publish) {
			return p
		}
		return p.Without(p.Publish[i])
	}
}

func dropSub(i int) func(securetest.Permissions) securetest.Permissions {
	return func(p securetest.Permissions) securetest.Permissions { return p.Without(p.Subscribe[i]) }
}

func noResponses(p securetest.Permissions) securetest.Permissions {
	p.AllowResponses = false
	return p
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// TestTLSNodesAndHealthCheckers: a server that requires mutual TLS and NKey
// users; nodes and checkers dial it from their Config (TLS and NKey in
// NATSOptions).
func TestTLSNodesAndHealthCheckers(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	pki := securetest.NewPKI(t)
	id := "tls"
	keys := map[string]nkeys.KeyPair{}
	ns := securetest.RunServer(t, func(o *server.Options) {
		o.TLS, o.TLSVerify, o.TLSConfig = true, true, pki.ServerTLS(t, true)
		for _, name := range []string{"admin", "n1", "n2"} {
			kp, err := nkeys.CreateUser()
			if err != nil {
				t.Fatal(err)
			}
			pub, _ := kp.PublicKey()
			keys[name] = kp
			u := &server.NkeyUser{Nkey: pub}
			if name != "admin" {
				u.Permissions = securetest.NodePermissions(id, name, "_INBOX", name == "n1").Server()
			}
			o.Nkeys = append(o.Nkeys, u)
		}
	})
	url := serverURL(ns, "tls")
	opts := func(name string) []nats.Option {
		kp := keys[name]
		pub, _ := kp.PublicKey()
		return append(pki.ClientOptions(), nats.Nkey(pub, kp.Sign))
	}
	s := securetest.Scenario{
		ClusterID: id, URL: url, Admin: opts("admin"), Dial: true,
		Members: [2]securetest.Member{{ID: "n1", Options: opts("n1")}, {ID: "n2", Options: opts("n2")}},
	}
	if err := s.Run(t); err != nil {
		t.Fatalf("nodes over TLS with NKeys: %v", err)
	}

	// The server refuses whoever lacks a part of it.
	for name, o := range map[string][]nats.Option{
		"plain TCP":        {nats.Nkey(mustPub(t, keys["n1"]), keys["n1"].Sign)},
		"no client cert":   {nats.RootCAs(pki.CAFile), nats.Nkey(mustPub(t, keys["n1"]), keys["n1"].Sign)},
		"no NKey":          pki.ClientOptions(),
		"untrusted server": {nats.ClientCert(pki.ClientCert, pki.ClientKey), nats.Nkey(mustPub(t, keys["n1"]), keys["n1"].Sign)},
	} {
		u := url
		if name == "plain TCP" {
			u = serverURL(ns, "nats")
		}
		nc, err := nats.Connect(u, append(o, nats.NoReconnect(), nats.Timeout(2*time.Second))...)
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		}
	}
	// A Node given a wrong NKey fails Start clearly.
	bad, _ := nkeys.CreateUser()
	n, err := cluster.NewNode(cluster.Config{ClusterID: id, NodeID: "intruder", NATSURLs: []string{url},
		NATSOptions: append(pki.ClientOptions(), nats.Nkey(mustPub(t, bad), bad.Sign))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Start(ctx); err == nil {
		_ = n.Stop(ctx)
		t.Error("a node with an unknown NKey started")
	}
}

func mustPub(t *testing.T, kp nkeys.KeyPair) string {
	t.Helper()
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// TestCredsUserRunsItsClusterAndCannotDisturbAnother: operator mode with a
// memory resolver; every node and checker dials with a .creds file
// (Config.NATSCredentials) whose user holds NodePermissions for its own
// cluster only. The "orders" nodes run the whole scenario; with the same
// credentials, nothing reaches the "payments" cluster.
func TestCredsUserRunsItsClusterAndCannotDisturbAnother(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	op := securetest.NewOperator(t)
	ns := securetest.RunServer(t, op.Configure)
	url := serverURL(ns, "nats")
	perms := func(cluster, node string, create bool) *securetest.Permissions {
		p := securetest.NodePermissions(cluster, node, "_INBOX", create)
		return &p
	}
	adminCreds := op.User(t, "admin", nil)
	ordersN1 := op.User(t, "orders-n1", perms("orders", "n1", true))
	ordersN2 := op.User(t, "orders-n2", perms("orders", "n2", false))
	paymentsP1 := op.User(t, "payments-p1", perms("payments", "p1", true))

	// The payments cluster runs, led by p1.
	p1, err := cluster.NewNode(cluster.Config{ClusterID: "payments", NodeID: "p1", NATSURLs: []string{url},
		NATSCredentials: paymentsP1, LeaseTTL: 3 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := waitJetStream(ctx, url, adminCreds); err != nil {
		t.Fatal(err)
	}
	if err := p1.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p1.Stop(context.Background()) })
	// Epoch can lag IsLeader by a moment (see TestEpochWhileLeading).
	natstest.WaitFor(t, 10*time.Second, func() bool { return p1.IsLeader() && p1.Epoch() > 0 }, "p1 never led")
	epoch := p1.Epoch()

	s := securetest.Scenario{
		ClusterID: "orders", URL: url, Admin: []nats.Option{nats.UserCredentials(adminCreds)}, Dial: true,
		Members: [2]securetest.Member{{ID: "n1", Creds: ordersN1}, {ID: "n2", Creds: ordersN2}},
	}
	if err := s.Run(t); err != nil {
		t.Fatalf("orders nodes with .creds: %v", err)
	}

	// orders-n1's credentials against payments.
	var mu sync.Mutex
	var violations []error
	nc, err := nats.Connect(url, nats.UserCredentials(ordersN1),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			mu.Lock()
			defer mu.Unlock()
			violations = append(violations, err)
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	attacks := map[string]func() error{
		"overwrite the lease": func() error {
			_, err := nc.Request("$KV.cluster-payments.lease", []byte(`{"node_id":"n1","epoch":999}`), time.Second)
			return err
		},
		"delete the bucket": func() error {
			_, err := nc.Request("$JS.API.STREAM.DELETE.KV_cluster-payments", nil, time.Second)
			return err
		},
		"purge the bucket": func() error {
			_, err := nc.Request("$JS.API.STREAM.PURGE.KV_cluster-payments", nil, time.Second)
			return err
		},
		"ask the leader to step down": func() error {
			_, err := nc.Request(wire.ControlSubject("payments"), nil, time.Second)
			return err
		},
		"bind the bucket": func() error {
			js, _ := jetstream.New(nc)
			c, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			_, err := js.KeyValue(c, "cluster-payments")
			return err
		},
	}
	for name, attack := range attacks {
		if err := attack(); err == nil {
			t.Errorf("%s: allowed", name)
		}
	}
	if _, err := nc.Subscribe("cluster.payments.health.p1", func(*nats.Msg) {}); err == nil {
		_ = nc.Flush()
	}
	natstest.WaitFor(t, 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(violations) >= len(attacks)
	}, "not every attack was reported as a permission violation")

	// A node for payments with orders' credentials cannot start.
	intruder, err := cluster.NewNode(cluster.Config{ClusterID: "payments", NodeID: "n1", NATSURLs: []string{url},
		NATSCredentials: ordersN1, LeaseTTL: 3 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ictx, icancel := context.WithTimeout(ctx, 5*time.Second)
	defer icancel()
	if err := intruder.Start(ictx); err == nil {
		_ = intruder.Stop(ctx)
		t.Error("a node started in payments with orders' credentials")
	} else if !errors.Is(err, cluster.ErrPermissionDenied) {
		t.Errorf("intruder's Start = %v, want ErrPermissionDenied", err)
	}

	// payments never noticed.
	if !p1.IsLeader() || p1.Epoch() != epoch {
		t.Errorf("payments disturbed: p1 leads=%v epoch %d (was %d)", p1.IsLeader(), p1.Epoch(), epoch)
	}
	if l, ok := p1.Lease(); !ok || l.NodeID != "p1" || l.Epoch != epoch {
		t.Errorf("payments lease now %+v", l)
	}
}

// waitJetStream waits until the account can use JetStream (in operator
// mode the account is enabled once resolved).
func waitJetStream(ctx context.Context, url, creds string) error {
	nc, err := nats.Connect(url, nats.UserCredentials(creds))
	if err != nil {
		return err
	}
	defer nc.Close()
	return natstest.WaitJetStream(ctx, nc)
}

// TestStartWithoutPermissionSaysPermissionDenied: a node whose user may not
// read the JetStream account info (which creating a bucket needs) must be
// told that permission was denied, not that the bucket was deleted.
func TestStartWithoutPermissionSaysPermissionDenied(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	id := "noinfo"
	var user nats.Option
	ns := securetest.RunServer(t, func(o *server.Options) {
		p := securetest.NodePermissions(id, "n1", "_INBOX", true).Without("$JS.API.INFO")
		user = userPass(o, "n1", &p)
	})
	n, err := cluster.NewNode(cluster.Config{ClusterID: id, NodeID: "n1", NATSURLs: []string{serverURL(ns, "nats")},
		NATSOptions: []nats.Option{user}, LeaseTTL: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = n.Start(ctx)
	if err == nil {
		_ = n.Stop(ctx)
		t.Fatal("started without permission to create its bucket")
	}
	if !errors.Is(err, cluster.ErrPermissionDenied) || errors.Is(err, cluster.ErrBucketDeleted) {
		t.Errorf("Start = %v; want ErrPermissionDenied (the server refused $JS.API.INFO), not ErrBucketDeleted", err)
	}
}
