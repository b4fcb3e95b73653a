package agent

import (
	"fmt"
	"os"
	"reflect"
	"time"

	"go.yaml.in/yaml/v3"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// StreamLeaderElection is the longest a replicated bucket's stream is
// without a leader when the NATS server holding it crashes: nats-server's
// raft elects a new one in 4-9 s. Renewals cannot land meanwhile.
const StreamLeaderElection = 9 * time.Second

// Warnings are what is valid in cfg, read from file, but probably not
// meant: `--check` prints them and still exits 0, and the agent logs them
// at start. Each names the file, the line and the field.
func Warnings(file string, cfg *Config) []Problem {
	lines := fieldLines(file)
	var out []Problem
	for i, cl := range cfg.Clusters {
		path := fmt.Sprintf("clusters[%d].election.lease_ttl", i)
		if msg := shortLeaseOnReplicas(cl.Election); msg != "" {
			out = append(out, Problem{File: file, Path: path, Line: lines[path], Msg: msg})
		}
	}
	return out
}

// shortLeaseOnReplicas is the warning for a lease_ttl that a replicated
// bucket's stream leader election outlasts: the leader has lease_ttl -
// lease_ttl/10 after its last renewal, less a renew_interval before the
// next one is sent, to land a renewal; with less than
// StreamLeaderElection, the crash of the server holding the stream leader
// takes the VIPs off every host until a new stream leader is elected.
func shortLeaseOnReplicas(e Election) string {
	if e.Replicas <= 1 {
		return ""
	}
	n, err := cluster.NewNode(e.nodeConfig("c", "n"), nil)
	if err != nil {
		return "" // invalid: reported by validation
	}
	cfg := n.Config()
	room := cfg.LeaseTTL - cfg.LeaseTTL/10 - cfg.RenewInterval
	if room > StreamLeaderElection {
		return ""
	}
	renew := e.RenewInterval.D()
	if renew == 0 {
		renew = wire.DefaultRenewInterval // what the library uses at the lease_ttl suggested
	}
	need := ((StreamLeaderElection+renew)*10/9 + time.Second).Truncate(time.Second)
	return fmt.Sprintf("%v gives the leader %v without a renewal before it drops its VIPs; on a replicated bucket (replicas %d) "+
		"the crash of the NATS server holding the stream leader stops renewals for up to %v (nats-server's raft electing a new one), "+
		"and every host drops the VIPs: raise lease_ttl to at least %v (with renew_interval %v), or accept that outage",
		cfg.LeaseTTL, room.Round(time.Millisecond), e.Replicas, StreamLeaderElection, need, renew)
}

// fieldLines maps the field paths of file to their lines; empty when the
// file cannot be read again.
func fieldLines(file string) map[string]int {
	d := &decoder{file: file, lines: map[string]int{}}
	data, err := os.ReadFile(file)
	if err != nil {
		return d.lines
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return d.lines
	}
	var cfg Config
	d.decode(&root, reflect.ValueOf(&cfg).Elem(), "")
	return d.lines
}
