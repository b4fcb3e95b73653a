package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TestNodeIDMayBeAHostName: node_id takes what the library takes
// (wire.CheckNodeID), so a host name with dots is a node ID; what
// the library refuses is refused, naming the field and its line. On main
// db1.example.com was refused ("has character '.'", issue 33, defect 3).
func TestNodeIDMayBeAHostName(t *testing.T) {
	for _, id := range []string{"db1.example.com", "web-1", "a_b.c-d.e"} {
		if _, err := Parse("agent.yaml", []byte("clusters:\n  - name: web\n    election:\n      node_id: "+id+"\n")); err != nil {
			t.Errorf("node_id %s: %v", id, err)
		}
	}
	for _, tc := range []struct{ id, want string }{
		{"db1..example.com", "agent.yaml:4: clusters[0].election.node_id: "},
		{".db1", "agent.yaml:4: clusters[0].election.node_id: "},
		{`"db1 x"`, "agent.yaml:4: clusters[0].election.node_id: "},
		{"db1.*", "agent.yaml:4: clusters[0].election.node_id: "},
		{"db1.>", "agent.yaml:4: clusters[0].election.node_id: "},
	} {
		got := problems(t, "clusters:\n  - name: web\n    election:\n      node_id: "+tc.id+"\n")
		if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) || !strings.Contains(got[0], "node_id") {
			t.Errorf("node_id %s: got %q, want one starting %q", tc.id, got, tc.want)
		}
	}
}

// TestCheckNodeIDsUsesTheHostName: a cluster with no node_id runs as the
// host name, which is checked as a node_id is: an FQDN passes, a name the
// library refuses is a problem at the cluster's line naming the host
// name, and so is a host name that could not be read.
func TestCheckNodeIDsUsesTheHostName(t *testing.T) {
	cfg, err := Parse("agent.yaml", []byte("clusters:\n  - name: web\n  - name: db\n    election: {node_id: db1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckNodeIDs("web1.example.com", nil); err != nil {
		t.Fatalf("host name web1.example.com: %v", err)
	}
	for _, tc := range []struct {
		host    string
		hostErr error
		want    string
	}{
		{"web1..example.com", nil, `agent.yaml:2: clusters[0].election.node_id: not set, and the host name "web1..example.com" cannot be a node ID`},
		{"", errors.New("uname failed"), "agent.yaml:2: clusters[0].election.node_id: not set, and the host name cannot be read: uname failed"},
	} {
		err := cfg.CheckNodeIDs(tc.host, tc.hostErr)
		var ce *ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("host %q: %v is not a *ConfigError", tc.host, err)
		}
		if len(ce.Problems) != 1 || !strings.HasPrefix(ce.Problems[0].String(), tc.want) {
			t.Errorf("host %q: got %q, want one starting %q", tc.host, ce.Problems, tc.want)
		}
	}
}

// TestAgentRunsWithADottedNodeID: an agent whose node ID is a host name
// leads, and answers maintenance requests on the node's subject token
// (dots written '=', wire.NodeIDToken), as go-cluster maintenance sends
// them.
func TestAgentRunsWithADottedNodeID(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	cfg, err := Parse("agent.yaml", []byte("clusters:\n  - name: dotted\n    election: {lease_ttl: 1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(cfg, Options{Hostname: "db1.example.com", Logger: quiet(),
		Connect: func(Cluster) (Endpoint, error) { return Endpoint{URLs: []string{srv.URL()}}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	defer a.Stop(context.Background())
	natstest.WaitFor(t, 10*time.Second, func() bool {
		s := a.Status()
		return len(s) == 1 && s[0].Leader == "db1.example.com"
	}, "the agent did not lead as db1.example.com: %+v", a.Status())

	if got, want := MaintenanceSubject("dotted", "db1.example.com"), "cluster.dotted.agent."+wire.NodeIDToken("db1.example.com")+".maintenance"; got != want {
		t.Fatalf("MaintenanceSubject = %q, want %q", got, want)
	}
	nc := srv.Connect(t)
	defer nc.Close()
	req, _ := json.Marshal(MaintenanceRequest{On: true})
	msg, err := nc.Request(MaintenanceSubject("dotted", "db1.example.com"), req, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var reply MaintenanceReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil || reply.Node != "db1.example.com" || !reply.Maintenance {
		t.Fatalf("reply %+v, %v", reply, err)
	}
}
