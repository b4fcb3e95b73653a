package proctest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// The state tests run two node processes that write fenced state
// (Node.State().Put) while they lead, freeze or kill the leader A under
// its writes, and read the bucket's stream with a plain JetStream client
// to check the order the server stored the writes in against what the
// processes reported.

// stateWriteInterval is the pause between a leader's state writes: none,
// so that a write is most likely in flight when the leader is frozen or
// killed.
const stateWriteInterval time.Duration = 0

// heldWriteInterval is the pause with a held write: long against a write,
// so that a stall most likely begins between writes and holds the next.
const heldWriteInterval = 10 * time.Millisecond

// stalePuts is how many writes a node attempts after its tenure ends.
const stalePuts = 5

// stateSetup is a state test's node processes and the recorder of their
// bucket's stream.
type stateSetup struct {
	nodes []*nodeProc
	rec   *streamRecorder
	links map[*nodeProc][]*faultproxy.Proxy // with proxied: each node's way to each server
}

// setupState starts servers nats-server processes (one, or a JetStream
// cluster with a bucket of that many replicas) and two state-writing
// nodes that pause interval between writes; proxied puts a fault proxy
// between each node and each server.
func setupState(t *testing.T, servers int, proxied bool, interval time.Duration) stateSetup {
	t.Helper()
	natsBin, nodeBin := binaries(t)
	var urls []string
	if servers == 1 {
		urls = []string{startNATS(t, natsBin).URL()}
	} else {
		for _, p := range startNATSCluster(t, natsBin, servers) {
			urls = append(urls, p.URL())
		}
	}
	id := fmt.Sprintf("state-%d-%d", time.Now().UnixNano()%1e6, clusterSeq.Add(1))
	s := nodeSettings{bin: nodeBin, cluster: id, natsURL: strings.Join(urls, ","), ttl: crashTTL, renew: crashRenew,
		extra: []string{"-state", "-write-interval", interval.String(),
			"-stale-puts", strconv.Itoa(stalePuts), "-replicas", strconv.Itoa(servers)}}
	st := stateSetup{links: map[*nodeProc][]*faultproxy.Proxy{}}
	for _, name := range []string{"p1", "p2"} {
		ns := s
		var links []*faultproxy.Proxy
		if proxied {
			var via []string
			for _, u := range urls {
				links = append(links, faultproxy.New(t, strings.TrimPrefix(u, "nats://")))
				via = append(via, links[len(links)-1].URL())
			}
			ns.natsURL = strings.Join(via, ",")
		}
		n := startNode(t, ns, name)
		st.nodes, st.links[n] = append(st.nodes, n), links
		if st.rec == nil {
			// The first node has created the bucket; nobody has written
			// to it yet (a new bucket's first election waits one LeaseTTL).
			st.rec = recordStream(t, urls, wire.BucketName(id))
		}
	}
	return st
}

// statePuts returns n's state_put events that match.
func statePuts(n *nodeProc, match func(event) bool) []event {
	return filter(n.snapshot(), func(e event) bool { return e.Event == "state_put" && match(e) })
}

func acked(e event) bool { return e.OK }

func all(event) bool { return true }

// filter returns the events of es that match.
func filter(es []event, match func(event) bool) []event {
	var out []event
	for _, e := range es {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

// waitAcked waits until n has count acknowledged writes sent at or after since.
func waitAcked(t *testing.T, n *nodeProc, count int, since time.Time, timeout time.Duration) {
	t.Helper()
	natstest.WaitFor(t, timeout, func() bool {
		return len(statePuts(n, func(e event) bool { return e.OK && !e.SentAt().Before(since) })) >= count
	}, "%s: fewer than %d acknowledged state writes since %s within %v; events: %s",
		n.id, count, since.Format("15:04:05.000"), timeout, n.describe())
}

// waitStateLeader waits until a node has an acknowledged write, and
// returns it and the other node.
func waitStateLeader(t *testing.T, nodes []*nodeProc, timeout time.Duration) (leader, other *nodeProc) {
	t.Helper()
	natstest.WaitFor(t, timeout, func() bool {
		for _, n := range nodes {
			if len(statePuts(n, acked)) > 0 {
				leader = n
				return true
			}
		}
		return false
	}, "no node wrote state within %v", timeout)
	return leader, others(nodes, leader)[0]
}

// waitFrozen waits until the kernel reports p stopped (state T).
func (p *nodeProc) waitFrozen(t *testing.T) {
	t.Helper()
	stat := fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid)
	natstest.WaitFor(t, 5*time.Second, func() bool {
		data, err := os.ReadFile(stat)
		if err != nil {
			return false
		}
		// "pid (comm) S ...": the state follows the last ')'.
		i := bytes.LastIndexByte(data, ')')
		return i >= 0 && i+2 < len(data) && data[i+2] == 'T'
	}, "%s not stopped after SIGSTOP", p.id)
}

// streamVerdict is what checkStateStream found.
type streamVerdict struct {
	epochA, epochB int64
	leaseSeq       uint64 // B's acquiring lease record
	aAcked         int    // A's acknowledged writes
	aLanded        int    // A's writes in the stream
	bAfter         int    // state messages after B's lease record
}

// checkStateStream checks the bucket's stream against the reports of A,
// the leader frozen or killed, and B, its successor, so far:
//   - every state message after B's acquiring lease record carries B's
//     epoch: nothing of A's, sent or in flight before, lands after it;
//   - every write A or B reported acknowledged is in the stream at its
//     revision, with the writer's epoch;
//   - no write reported refused (ErrFenced, ErrNotLeader) is.
func checkStateStream(t *testing.T, rec *streamRecorder, a, b *nodeProc) streamVerdict {
	t.Helper()
	var v streamVerdict
	// The reports first: every write reported so far is in the stream by
	// the time complete reads its last sequence.
	aPuts, bPuts := statePuts(a, all), statePuts(b, all)
	msgs := rec.complete(t)
	aAcked, bAcked := filter(aPuts, acked), filter(bPuts, acked)
	if len(aAcked) == 0 || len(bAcked) == 0 {
		t.Fatalf("acknowledged writes: %s %d, %s %d; want both", a.id, len(aAcked), b.id, len(bAcked))
	}
	v.aAcked = len(aAcked)
	v.epochA, v.epochB = aAcked[0].Epoch, bAcked[0].Epoch
	for _, w := range []struct {
		n     *nodeProc
		puts  []event
		epoch int64
	}{{a, aAcked, v.epochA}, {b, bAcked, v.epochB}} {
		for _, e := range w.puts {
			if e.Epoch != w.epoch {
				t.Fatalf("%s wrote in epochs %d and %d: more than one tenure", w.n.id, w.epoch, e.Epoch)
			}
		}
	}
	if v.epochB <= v.epochA {
		t.Fatalf("successor %s's epoch %d is not above %s's %d", b.id, v.epochB, a.id, v.epochA)
	}

	bySeq := make(map[uint64]streamMsg, len(msgs))
	byKey := make(map[string]streamMsg, len(msgs))
	for _, m := range msgs {
		bySeq[m.Seq] = m
		byKey[rec.key(m)] = m
		if v.leaseSeq == 0 && rec.key(m) == wire.LeaseKey {
			if l, err := wire.DecodeLease(m.Data, m.Seq); err == nil && l.NodeID == b.id && l.Epoch == v.epochB {
				v.leaseSeq = m.Seq
			}
		}
	}
	if v.leaseSeq == 0 {
		t.Fatalf("no lease record of %s with epoch %d in the stream", b.id, v.epochB)
	}

	aPrefix := "state.w." + a.id + "."
	for _, m := range msgs {
		key := rec.key(m)
		if !strings.HasPrefix(key, "state.") {
			continue
		}
		if strings.HasPrefix(key, aPrefix) {
			v.aLanded++
			if m.Epoch != strconv.FormatInt(v.epochA, 10) {
				t.Errorf("%s's write %s (seq %d) carries epoch %q, want %d", a.id, key, m.Seq, m.Epoch, v.epochA)
			}
		}
		if m.Seq > v.leaseSeq {
			v.bAfter++
			if m.Epoch != strconv.FormatInt(v.epochB, 10) {
				t.Errorf("state message %s (seq %d) after %s's lease record (seq %d) carries epoch %q, want %d",
					key, m.Seq, b.id, v.leaseSeq, m.Epoch, v.epochB)
			}
		}
	}

	for _, w := range []struct {
		n     *nodeProc
		puts  []event
		epoch int64
	}{{a, aPuts, v.epochA}, {b, bPuts, v.epochB}} {
		for _, e := range w.puts {
			key := fmt.Sprintf("w.%s.%d", w.n.id, e.Seq)
			m, landed := byKey["state."+key]
			switch e.Outcome {
			case "acked":
				switch {
				case !landed || bySeq[e.Rev].Subject != m.Subject:
					t.Errorf("%s's acknowledged write %s (revision %d) is not in the stream at that revision", w.n.id, key, e.Rev)
				case string(m.Data) != key || m.Epoch != strconv.FormatInt(w.epoch, 10):
					t.Errorf("%s's acknowledged write %s: stream holds %q with epoch %q", w.n.id, key, m.Data, m.Epoch)
				}
			case "fenced", "not_leader":
				if landed {
					t.Errorf("%s's write %s was refused (%s) but is in the stream at seq %d", w.n.id, key, e.Outcome, m.Seq)
				}
			}
		}
	}
	return v
}

func TestSIGSTOPLeaderStateWritesFenced(t *testing.T) { testSIGSTOPState(t, 1, false) }

func TestSIGSTOPLeaderStateWritesFencedJetStreamCluster(t *testing.T) { testSIGSTOPState(t, 3, false) }

// A write A sent just before the freeze is held in the network (a stalled
// link) until B has taken over: it reaches the server after B's lease
// record, and must be refused.
func TestSIGSTOPLeaderHeldStateWriteFenced(t *testing.T) { testSIGSTOPState(t, 1, true) }

func TestSIGSTOPLeaderHeldStateWriteFencedJetStreamCluster(t *testing.T) {
	testSIGSTOPState(t, 3, true)
}

// holdWrite stalls n's links at a moment when n sends a write through
// them: its bytes are held in the proxies, and n waits for the answer.
// The write must be sent after the stall began; a stall that caught a
// write's answer on its way back holds that instead, so it is tried again.
func holdWrite(t *testing.T, n *nodeProc, links []*faultproxy.Proxy) {
	t.Helper()
	for try := 1; ; try++ {
		for _, l := range links {
			l.Stall()
		}
		stalled := time.Now()
		if poll(500*time.Millisecond, func() bool {
			return len(filter(n.snapshot(), func(e event) bool { return e.Event == "state_send" && !e.SentAt().Before(stalled) })) > 0
		}) {
			return
		}
		if try == 20 {
			t.Fatalf("%s sent no write into its stalled links in %d tries", n.id, try)
		}
		for _, l := range links {
			l.Restore()
		}
		waitAcked(t, n, 1, time.Now(), 10*time.Second)
	}
}

// poll reports whether cond came to hold within timeout.
func poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// testSIGSTOPState freezes leader A under its state writes past its
// LeaseTTL, waits until B leads and writes, and wakes A. With held, A's
// links are stalled just before the freeze, with a write of A's in them,
// and restored just before the wake-up: that write lands late.
func testSIGSTOPState(t *testing.T, servers int, held bool) {
	t.Parallel()
	natstest.CheckLeaks(t)
	interval := stateWriteInterval
	if held {
		interval = heldWriteInterval
	}
	st := setupState(t, servers, held, interval)
	a, b := waitStateLeader(t, st.nodes, 30*time.Second)
	waitAcked(t, a, 20, time.Time{}, 10*time.Second)

	if held {
		holdWrite(t, a, st.links[a])
	}
	a.signal(syscall.SIGSTOP)
	a.waitFrozen(t)
	paused := time.Now()
	waitAcked(t, b, 10, paused, crashTTL+15*time.Second)
	natstest.WaitFor(t, 3*crashTTL, func() bool { return time.Since(paused) > 2*crashTTL }, "pause")
	if held {
		for _, l := range st.links[a] {
			l.Restore() // A, still frozen, sent these bytes before the freeze
		}
	}
	resumed := time.Now() // A is still frozen: whatever it sends from now on, it sends awake
	a.signal(syscall.SIGCONT)
	done := a.waitEvent(t, 15*time.Second, "state_done after SIGCONT",
		func(e event) bool { return e.Event == "state_done" && !e.At().Before(resumed) })
	waitAcked(t, b, 5, done.At(), 10*time.Second) // B writes on after A's late bytes

	v := checkStateStream(t, st.rec, a, b)

	var inFlight, awake []event
	for _, e := range statePuts(a, all) {
		switch {
		case !e.SentAt().Before(resumed):
			awake = append(awake, e)
		case !e.SentAt().Before(paused):
			t.Errorf("%s sent write %d at %s while frozen", a.id, e.Seq, e.SentAt().Format("15:04:05.000"))
		case !e.At().Before(resumed):
			inFlight = append(inFlight, e)
		}
	}
	if len(awake) < stalePuts {
		t.Errorf("%s attempted %d writes after SIGCONT, want at least %d", a.id, len(awake), stalePuts)
	}
	for _, e := range awake {
		if e.Outcome != "fenced" && e.Outcome != "not_leader" {
			t.Errorf("%s's write %d after SIGCONT: outcome %s (%s), want fenced or not_leader", a.id, e.Seq, e.Outcome, e.Error)
		}
	}
	if held {
		// Held until B led: it cannot have been acknowledged.
		if len(inFlight) == 0 {
			t.Errorf("no write of %s was in flight at the freeze", a.id)
		}
		for _, e := range inFlight {
			if e.Outcome != "fenced" && e.Outcome != "not_leader" {
				t.Errorf("%s's write %d held across the freeze: outcome %s (%s), want fenced or not_leader", a.id, e.Seq, e.Outcome, e.Error)
			}
		}
	}
	t.Logf("RESULT state SIGSTOP (%d server(s), link held %v): %s (epoch %d) frozen after %d acknowledged writes, %d of its writes in the stream; %s's lease record (epoch %d) at seq %d, %d state messages after it, all epoch %d; in flight at the freeze: %s; after SIGCONT: %s",
		servers, held, a.id, v.epochA, v.aAcked, v.aLanded, b.id, v.epochB, v.leaseSeq, v.bAfter, v.epochB,
		outcomes(inFlight), outcomes(awake))
}

func TestKill9LeaderUnderStateWrites(t *testing.T) { testKill9State(t, 1) }

func TestKill9LeaderUnderStateWritesJetStreamCluster(t *testing.T) { testKill9State(t, 3) }

// testKill9State kills leader A under its state writes and waits until B
// leads and writes.
func testKill9State(t *testing.T, servers int) {
	t.Parallel()
	natstest.CheckLeaks(t)
	st := setupState(t, servers, false, stateWriteInterval)
	a, b := waitStateLeader(t, st.nodes, 30*time.Second)
	waitAcked(t, a, 20, time.Time{}, 10*time.Second)

	a.signal(syscall.SIGKILL)
	select {
	case <-a.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not exit after SIGKILL", a.id)
	}
	killed := time.Now()
	waitAcked(t, b, 20, killed, crashTTL+15*time.Second)
	first := statePuts(b, acked)[0]

	v := checkStateStream(t, st.rec, a, b)
	t.Logf("RESULT state kill -9 (%d server(s)): %s (epoch %d) killed after %d acknowledged writes, %d of its writes in the stream (%d never reported); %s's first write %v after the kill; its lease record (epoch %d) at seq %d, %d state messages after it, all epoch %d",
		servers, a.id, v.epochA, v.aAcked, v.aLanded, v.aLanded-v.aAcked, b.id, first.At().Sub(killed).Round(time.Millisecond),
		v.epochB, v.leaseSeq, v.bAfter, v.epochB)
}

// outcomes counts writes by outcome: "3 (fenced 1, not_leader 2)".
func outcomes(es []event) string {
	count := map[string]int{}
	for _, e := range es {
		count[e.Outcome]++
	}
	var parts []string
	for _, o := range []string{"acked", "fenced", "not_leader", "error"} {
		if count[o] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o, count[o]))
		}
	}
	return fmt.Sprintf("%d (%s)", len(es), strings.Join(parts, ", "))
}
