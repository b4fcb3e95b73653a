package health

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestRawRequest checks what any NATS client gets, as the NATS CLI does
// with `nats req cluster.orders.health.n1 ""`: an empty payload, a plain
// connection, and exactly the specification's JSON names.
func TestRawRequest(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	c := startChecker(t, srv.Connect(t), "orders", "n1")
	c.SetRole("PRIMARY")
	c.SetLeader("n1")
	nc := srv.Connect(t) // a plain connection, nothing of this package

	keys := func(subject string) map[string]json.RawMessage {
		t.Helper()
		m, err := nc.Request(subject, []byte{}, 2*time.Second)
		if err != nil {
			t.Fatalf("request %s: %v", subject, err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(m.Data, &fields); err != nil {
			t.Fatalf("reply %q is not a JSON object: %v", m.Data, err)
		}
		return fields
	}

	spec := []string{"leader", "nodeId", "role", "timestamp", "uptimeMs"}
	fields := keys("cluster.orders.health.n1")
	if got := slices.Sorted(maps.Keys(fields)); !slices.Equal(got, spec) {
		t.Fatalf("keys = %v, want exactly %v (custom omitted when empty)", got, spec)
	}
	if string(fields["nodeId"]) != `"n1"` || string(fields["role"]) != `"PRIMARY"` || string(fields["leader"]) != `"n1"` {
		t.Errorf("reply = %v", fields)
	}

	c.SetCustom("version", "1.4.2")
	c.SetEpochFunc(func() int64 { return 3 })
	fields = keys("cluster.orders.health") // the cluster-wide subject answers a plain request too
	if got := slices.Sorted(maps.Keys(fields)); !slices.Equal(got, []string{"custom", "epoch", "leader", "nodeId", "role", "timestamp", "uptimeMs"}) {
		t.Fatalf("keys = %v", got)
	}
	if string(fields["custom"]) != `{"version":"1.4.2"}` || string(fields["epoch"]) != "3" {
		t.Errorf("reply = %v", fields)
	}
}

func TestMalformedRequests(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	startChecker(t, srv.Connect(t), "orders", "n1")
	nc := srv.Connect(t)
	subject := NodeSubject("orders", "n1")

	bad := map[string]string{
		"garbage":        "hello",
		"array":          "[1,2]",
		"string":         `"ping"`,
		"null":           "null",
		"number":         "42",
		"trailing data":  "{}x",
		"truncated":      `{"a":`,
		"binary":         "\x00\xff\xfe{",
		"oversized":      `{"pad":"` + strings.Repeat("x", MaxRequestSize) + `"}`,
		"oversized 512K": strings.Repeat(" ", 512<<10),
	}
	for name, payload := range bad {
		t.Run(name, func(t *testing.T) {
			m, err := nc.Request(subject, []byte(payload), 2*time.Second)
			if err != nil {
				t.Fatalf("no reply: %v", err)
			}
			var r Response
			if err := json.Unmarshal(m.Data, &r); err != nil {
				t.Fatalf("error reply %q is not JSON: %v", m.Data, err)
			}
			if r.NodeID != "n1" || !strings.HasPrefix(r.Error, "invalid request") || r.Role != "" {
				t.Fatalf("reply = %s, want an error reply", m.Data)
			}
		})
	}

	// A request without a reply subject cannot be answered: it is ignored.
	if err := nc.Publish(subject, []byte("garbage")); err != nil {
		t.Fatal(err)
	}

	// Accepted payloads; the node is still answering after all of the above.
	for _, payload := range []string{"", "  \n", "{}", `{"future":1}`, " {} "} {
		m, err := nc.Request(subject, []byte(payload), 2*time.Second)
		if err != nil {
			t.Fatalf("request %q: %v", payload, err)
		}
		r, err := decodeResponse(m.Data)
		if err != nil || r.NodeID != "n1" || r.Role != "PASSIVE" {
			t.Fatalf("request %q: reply %s, %v", payload, m.Data, err)
		}
	}
}
