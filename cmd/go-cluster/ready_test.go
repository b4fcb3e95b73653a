package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// A member whose ReadinessCheck fails: status shows it as not ready, with
// the reason, and stepdown --to refuses to hand over to it.
func TestCLINotReady(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	srv := natstest.RunServer(t)
	const id = "ready"
	const reason = "database unreachable"
	ms := []*member{startMember(t, srv, id, "a"), startMember(t, srv, id, "b")}
	sick := startMember(t, srv, id, "sick", func(c *cluster.Config) {
		c.ReadinessCheck = func(context.Context) error { return errors.New(reason) }
		c.ReadinessInterval = 100 * time.Millisecond
	})
	ms = append(ms, sick)
	leader := waitLeader(t, ms)
	natstest.WaitFor(t, 10*time.Second, func() bool {
		err := sick.node.Ready()
		return err != nil && strings.Contains(err.Error(), reason)
	}, "the sick node never reported its failed check")
	cli := func(args ...string) result {
		t.Helper()
		return runCLI(t, bin, nil, append([]string{"-s", srv.URL(), "--cluster", id}, args...)...)
	}

	t.Run("status", func(t *testing.T) {
		r := cli("status", "--timeout", "30s", "--settle", "2s")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if !containsRow(r.stdout, "sick", "not", "ready", "not", "ready", leader.node.Config().NodeID) || !strings.Contains(r.stdout, reason) {
			t.Errorf("sick is not shown as not ready, with the reason:\n%s", r.stdout)
		}
		for _, m := range ms[:2] {
			if f := rowOf(r.stdout, m.node.Config().NodeID); len(f) < 3 || f[2] != healthOK {
				t.Errorf("%s is not ok:\n%s", m.node.Config().NodeID, r.stdout)
			}
		}

		r = cli("status", "--json", "--timeout", "30s", "--settle", "2s")
		if r.code != 0 {
			t.Fatalf("json: exit %d: %s", r.code, r.stderr)
		}
		var st statusReport
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatalf("json: %v\n%s", err, r.stdout)
		}
		seen := false
		for _, m := range st.Members {
			switch m.Node {
			case "sick":
				seen = true
				if m.Health != healthNotReady || !strings.Contains(m.NotReady, reason) || !strings.Contains(r.stdout, `"not_ready": "cluster: not ready: `) {
					t.Errorf("sick in JSON: %s", r.stdout)
				}
			default:
				if m.Health != healthOK {
					t.Errorf("member %+v", m)
				}
			}
		}
		if !seen {
			t.Errorf("sick missing: %s", r.stdout)
		}
	})

	t.Run("health", func(t *testing.T) {
		r := cli("health", "sick")
		if f := rowOf(r.stdout, "sick"); r.code != 0 || len(f) < 3 || f[2] != "no" || !strings.Contains(r.stdout, reason) {
			t.Errorf("health sick: exit %d, %q, %q", r.code, r.stdout, r.stderr)
		}
		r = cli("health", "sick", "--json")
		var resp health.Response
		if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil || resp.IsReady() || !strings.Contains(resp.NotReady, reason) {
			t.Errorf("health sick --json: %v, %q", err, r.stdout)
		}
	})

	t.Run("stepdown to a node that is not ready", func(t *testing.T) {
		epoch := leader.node.Epoch()
		r := cli("stepdown", "--to", "sick", "--timeout", "5s")
		if r.code != exitNotReady || !strings.Contains(r.stderr, "not ready") || !strings.Contains(r.stderr, reason) ||
			!strings.Contains(r.stderr, "nothing was sent") {
			t.Errorf("stepdown --to sick: exit %d, stdout %q, stderr %q; want exit 4, refused before sending", r.code, r.stdout, r.stderr)
		}
		if !leader.node.IsLeader() || leader.node.Epoch() != epoch {
			t.Fatalf("the leader changed: %s leads at epoch %d", leader.node.Leader(), leader.node.Epoch())
		}

		// --force sends all the same: the leader steps down, the sick node
		// does not campaign, another takes the lease, and the command says
		// the handover did not go where asked.
		r = cli("stepdown", "--to", "sick", "--force", "--timeout", "15s")
		if r.code != 1 || !strings.Contains(r.stderr, "handover incomplete") {
			t.Errorf("stepdown --to sick --force: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		if got := waitLeader(t, ms); got == sick {
			t.Errorf("the node that is not ready leads")
		}
	})
}

// rowOf returns the whitespace-separated fields of the first line of out
// whose first field is first.
func rowOf(out, first string) []string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == first {
			return f
		}
	}
	return nil
}
