package health

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestAdapterCarriesReadiness runs a real cluster.Node whose
// ReadinessCheck fails, then passes, then fails again, and reads its
// readiness from the health replies on the wire.
func TestAdapterCarriesReadiness(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	ctx := testCtx(t, 60*time.Second)
	const reason = "database unreachable"
	var failing atomic.Bool
	failing.Store(true)

	nc := srv.Connect(t)
	checker, err := NewChecker(Config{ClusterID: "orders", NodeID: "n1", Conn: nc, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	adapter := NewAdapter(checker)
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: "orders", NodeID: "n1", Conn: nc, Logger: quiet,
		LeaseTTL: time.Second, RenewInterval: 250 * time.Millisecond,
		ReadinessCheck: func(context.Context) error {
			if failing.Load() {
				return errors.New(reason)
			}
			return nil
		},
		ReadinessInterval: 50 * time.Millisecond, ReadinessThreshold: 2,
	}, adapter)
	if err != nil {
		t.Fatal(err)
	}
	if err := adapter.Bind(node); err != nil {
		t.Fatal(err)
	}
	if err := checker.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(checker.Stop)
	if err := node.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := node.Stop(sctx); err != nil {
			t.Errorf("node Stop: %v", err)
		}
	})

	// ask sends a health request and returns the reply's JSON fields.
	asker := srv.Connect(t)
	ask := func() map[string]any {
		t.Helper()
		m, err := asker.RequestWithContext(testCtx(t, 2*time.Second), NodeSubject("orders", "n1"), nil)
		if err != nil {
			t.Fatalf("request: %v", err)
		}
		var fields map[string]any
		if err := json.Unmarshal(m.Data, &fields); err != nil {
			t.Fatalf("reply %q: %v", m.Data, err)
		}
		return fields
	}
	var last map[string]any
	waitReply := func(what string, cond func(map[string]any) bool) {
		t.Helper()
		natstest.WaitFor(t, 10*time.Second, func() bool {
			last = ask()
			return cond(last)
		}, "%s; last reply %v", what, &last) // a pointer: printed as it is at the deadline
	}
	notReady := func(f map[string]any) string { s, _ := f["notReady"].(string); return s }

	// The first check fails: never ready, and the reply says why.
	waitReply("the reply never said the node is not ready, and why", func(f map[string]any) bool {
		return strings.Contains(notReady(f), "not ready") && strings.Contains(notReady(f), reason)
	})
	if last["role"] != rolePassive {
		t.Errorf("a node whose check never passed reports %v", last["role"])
	}

	// It passes: ready (the field is omitted) and the node leads.
	failing.Store(false)
	waitReply("the reply never showed the node ready and leading", func(f map[string]any) bool {
		_, has := f["notReady"]
		return !has && f["role"] == rolePrimary
	})

	// It fails ReadinessThreshold times in a row: not ready, and the node
	// steps down.
	failing.Store(true)
	waitReply("the reply never showed the failures and the step-down", func(f map[string]any) bool {
		return strings.Contains(notReady(f), "failed in a row") && strings.Contains(notReady(f), reason) && f["role"] == rolePassive
	})
	if err := node.Ready(); err == nil || notReady(last) != err.Error() {
		t.Errorf("notReady %q, Node.Ready %v", notReady(last), err)
	}
	r, err := newTestClient(t, asker, "orders").QueryNode(ctx, "n1", 2*time.Second)
	if err != nil || r.IsReady() || !strings.HasPrefix(r.NotReady, cluster.ErrNotReady.Error()+": ") || !strings.Contains(r.NotReady, reason) {
		t.Errorf("QueryNode = %+v, %v; want not ready because %s", r, err, reason)
	}
}

// TestSetReadyFunc reports a bare Checker's readiness, in normal and error
// replies, and reads replies that lack the field as ready.
func TestSetReadyFunc(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	c := startChecker(t, srv.Connect(t), "orders", "n1")
	cl := newTestClient(t, srv.Connect(t), "orders")
	ctx := testCtx(t, 30*time.Second)
	query := func() Response {
		t.Helper()
		r, err := cl.QueryNode(ctx, "n1", 2*time.Second)
		if err != nil && !errors.Is(err, ErrRemote) {
			t.Fatalf("QueryNode: %v", err)
		}
		return r
	}

	if r := query(); !r.IsReady() || r.NotReady != "" {
		t.Errorf("no source: %+v, want ready", r)
	}
	c.SetReadyFunc(func() error { return errors.New("disk full") })
	if r := query(); r.IsReady() || r.NotReady != "disk full" {
		t.Errorf("with a failing source: %+v", r)
	}
	rs, err := cl.QueryCluster(ctx, 300*time.Millisecond)
	if err != nil || len(rs) != 1 || rs[0].NotReady != "disk full" {
		t.Errorf("QueryCluster = %+v, %v", rs, err)
	}
	if got := c.Response(); got.NotReady != "disk full" {
		t.Errorf("Response() = %+v", got)
	}

	// Error replies carry it too: a node whose custom value cannot be
	// encoded still says whether it may lead.
	c.SetCustom("bad", make(chan int))
	r, err := cl.QueryNode(ctx, "n1", 2*time.Second)
	if !errors.Is(err, ErrRemote) || r.Error == "" || r.NotReady != "disk full" {
		t.Errorf("error reply: %+v, %v", r, err)
	}
	c.SetCustom("bad", nil)
	m, err := srv.Connect(t).RequestWithContext(ctx, NodeSubject("orders", "n1"), []byte("garbage"))
	if err != nil || !strings.Contains(string(m.Data), `"notReady":"disk full"`) || !strings.Contains(string(m.Data), `"error":"invalid request`) {
		t.Errorf("reply to a malformed request: %v, %v", m, err)
	}

	c.SetReadyFunc(func() error { return errors.New("") })
	if r := query(); r.IsReady() || r.NotReady != "not ready" {
		t.Errorf("an error without text: %+v, want not ready", r)
	}
	c.SetReadyFunc(func() error { return nil })
	if r := query(); !r.IsReady() {
		t.Errorf("a passing source: %+v", r)
	}
	c.SetReadyFunc(func() error { return errors.New("disk full") })
	c.SetReadyFunc(nil)
	if r := query(); !r.IsReady() {
		t.Errorf("source removed: %+v", r)
	}
}

// A reply of a node built before NotReady existed reads as ready.
func TestOldReplyReadsAsReady(t *testing.T) {
	r, err := decodeResponse([]byte(`{"nodeId":"n1","role":"PASSIVE","leader":"n2","uptimeMs":5,"timestamp":1,"epoch":3}`))
	if err != nil || !r.IsReady() || r.NotReady != "" {
		t.Errorf("decode = %+v, %v", r, err)
	}
	r, err = decodeResponse([]byte(`{"nodeId":"n1","role":"PASSIVE","leader":"n2","uptimeMs":5,"timestamp":1,"notReady":"cluster: not ready: x"}`))
	if err != nil || r.IsReady() || r.NotReady != "cluster: not ready: x" {
		t.Errorf("decode = %+v, %v", r, err)
	}
}
