package proctest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// manyClusters is how many clusters each agent of
// TestAgentFiftyClustersShareOneConnection runs, as keepalived users run
// fifty VRRP instances on a load balancer pair; the first manyVIPs of
// them have a VIP.
const (
	manyClusters = 50
	manyVIPs     = 4
)

// manyName is the name of cluster i.
func manyName(i int) string { return fmt.Sprintf("many%02d", i) }

// manyVIP is the VIP of cluster i (< manyVIPs), in each agent's namespace.
func manyVIP(i int) string { return fmt.Sprintf("10.99.43.%d", i+1) }

// manyLeader is the agent meant to lead cluster i: a the even ones, b the
// odd ones (its priority there is higher).
func manyLeader(i int) string {
	if i%2 == 0 {
		return "a"
	}
	return "b"
}

// manyConfig is agent id's file: every cluster on natsURL, with a
// priority that makes it lead its half, the first manyVIPs with a VIP on
// eth0 of the namespace netns.
func manyConfig(natsURL, id, listen, netns string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %s\nclusters:\n", listen)
	for i := range manyClusters {
		prio := 0
		if manyLeader(i) == id {
			prio = 100
		}
		fmt.Fprintf(&b, "  - name: %s\n    connection: {servers: [%q]}\n    election: {node_id: %s, lease_ttl: 2s, priority: %d}\n",
			manyName(i), natsURL, id, prio)
		if i < manyVIPs {
			fmt.Fprintf(&b, "    vips:\n      - {address: %s/24, interface: eth0, netns: %s, garp: {count: 1, refresh: 0s}}\n", manyVIP(i), netns)
		}
	}
	return b.String()
}

// clusterView is what an agent's /healthz says of one cluster.
type clusterView struct {
	Cluster string `json:"cluster"`
	Leader  string `json:"leader"`
	Epoch   int64  `json:"epoch"`
	Ready   bool   `json:"ready"`
	NATS    string `json:"nats"`
}

// agentViews reads the agent's /healthz on addr: its clusters by name
// (none when it does not answer).
func agentViews(addr string) map[string]clusterView {
	_, body := get("http://" + addr + "/healthz")
	var views []clusterView
	_ = json.Unmarshal([]byte(body), &views)
	out := map[string]clusterView{}
	for _, v := range views {
		out[v.Cluster] = v
	}
	return out
}

// connsByName reads the server's /connz: how many client connections it
// holds of each name.
func connsByName(t *testing.T, monitor string) map[string]int {
	t.Helper()
	resp, err := http.Get(monitor + "/connz?limit=4096") //nolint:noctx // a test's loopback request
	if err != nil {
		t.Fatalf("connz: %v", err)
	}
	defer resp.Body.Close()
	var cz struct {
		Conns []struct {
			Name string `json:"name"`
		} `json:"connections"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&cz); err != nil {
		t.Fatalf("connz: %v", err)
	}
	out := map[string]int{}
	for _, c := range cz.Conns {
		out[c.Name]++
	}
	return out
}

// agentConnCounts is connsByName of the agents' connections only.
func agentConnCounts(t *testing.T, monitor string) map[string]int {
	out := map[string]int{}
	for name, n := range connsByName(t, monitor) {
		if strings.HasPrefix(name, "go-cluster agent") {
			out[name] = n
		}
	}
	return out
}

// TestAgentFiftyClustersShareOneConnection (issue 43): two agent
// processes of 50 clusters each (4 with a VIP, each agent's in a network
// namespace of its own) hold one NATS connection each, as the server's
// /connz counts; every cluster is led by the agent of higher priority;
// maintenance on one cluster moves its leadership and its VIP to the
// other agent while no other cluster changes leader or epoch; a SIGTERM
// of one agent hands all its clusters over and closes its connection.
func TestAgentFiftyClustersShareOneConnection(t *testing.T) {
	// Runs alone: it judges that 49 clusters keep their leader and epoch while one moves, which a tenure lost to load would spoil.
	requireRoot(t)
	natsBin, _ := binaries(t)
	monPort := freePort(t)
	ns := newNATSProc(t, natsBin, "proctest", freePort(t), fmt.Sprintf("http: \"127.0.0.1:%d\"\n", monPort))
	ns.start(t)
	monitor := fmt.Sprintf("http://127.0.0.1:%d", monPort)
	dir := t.TempDir()
	netns, addrs, agents := map[string]string{}, map[string]string{}, map[string]*runProc{}
	for _, id := range []string{"a", "b"} {
		netns[id] = netnsName(t, "gcmany", id)
		path := netnsWithEth0(t, netns[id])
		addrs[id] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		file := filepath.Join(dir, id+".yaml")
		if err := os.WriteFile(file, []byte(manyConfig(ns.URL(), id, addrs[id], path)), 0o600); err != nil {
			t.Fatal(err)
		}
		p := &runProc{node: id, stderr: filepath.Join(t.TempDir(), id+".stderr"), exited: make(chan struct{})}
		startProc(t, p, nil, "agent", "--config", file)
		agents[id] = p
	}
	// settled reports whether both agents see cluster i led by leader
	// (the leader ready), and only the leader's namespace holds its VIP.
	settled := func(views map[string]map[string]clusterView, i int, leader string) bool {
		for _, id := range []string{"a", "b"} {
			v := views[id][manyName(i)]
			if v.Leader != leader || v.NATS != "connected" || (id == leader && !v.Ready) {
				return false
			}
			if i < manyVIPs && hasAddr(t, netns[id], manyVIP(i)) != (id == leader) {
				return false
			}
		}
		return true
	}
	views := func() map[string]map[string]clusterView {
		return map[string]map[string]clusterView{"a": agentViews(addrs["a"]), "b": agentViews(addrs["b"])}
	}
	var last map[string]map[string]clusterView
	natstest.WaitFor(t, 30*time.Second, func() bool {
		last = views()
		for i := range manyClusters {
			if !settled(last, i, manyLeader(i)) {
				return false
			}
		}
		return true
	}, "not every cluster led by its agent: %s", lazy(func() string { return fmt.Sprint(last) }))
	want := map[string]int{"go-cluster agent a": 1, "go-cluster agent b": 1}
	if got := agentConnCounts(t, monitor); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the server's /connz holds the agents' connections %v, want one each %v", got, want)
	}
	t.Logf("/connz: %v for %d clusters on each agent", agentConnCounts(t, monitor), manyClusters)

	// Maintenance moves many00 (with a VIP) from a to b, and nothing else.
	before := views()
	out, err := exec.Command(goClusterBinary(t), "--server", ns.URL(), "--cluster", manyName(0), "maintenance", "on", "--node", "a").CombinedOutput()
	if err != nil {
		t.Fatalf("maintenance on: %v: %s", err, out)
	}
	natstest.WaitFor(t, 15*time.Second, func() bool { return settled(views(), 0, "b") },
		"many00 and its VIP never moved to b: %s", lazy(func() string { return fmt.Sprint(views()["b"][manyName(0)]) }))
	after := views()
	for i := 1; i < manyClusters; i++ {
		name := manyName(i)
		if !settled(after, i, manyLeader(i)) || after["b"][name].Epoch != before["b"][name].Epoch {
			t.Errorf("%s changed when many00 moved: %+v, was %+v", name, after["b"][name], before["b"][name])
		}
	}

	// A SIGTERM of a: b leads all, and a's connection is gone.
	agents["a"].signal(syscall.SIGTERM)
	if code := agents["a"].waitExit(t, 30*time.Second); code != 0 {
		t.Fatalf("a exited %d", code)
	}
	natstest.WaitFor(t, 15*time.Second, func() bool {
		v := agentViews(addrs["b"])
		for i := range manyClusters {
			if s := v[manyName(i)]; s.Leader != "b" || !s.Ready {
				return false
			}
			if i < manyVIPs && !hasAddr(t, netns["b"], manyVIP(i)) {
				return false
			}
		}
		return true
	}, "b does not lead every cluster after a stopped: %s", lazy(func() string { return fmt.Sprint(agentViews(addrs["b"])) }))
	want = map[string]int{"go-cluster agent b": 1}
	if got := agentConnCounts(t, monitor); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after a stopped the server holds the agents' connections %v, want %v", got, want)
	}
	for i := range manyVIPs {
		if hasAddr(t, netns["a"], manyVIP(i)) {
			t.Errorf("a left the VIP of %s behind", manyName(i))
		}
	}
}
