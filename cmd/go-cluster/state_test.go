package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// The state commands, built and run as a real process, read what the
// leader of a running cluster writes.
func TestCLIState(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	srv := natstest.RunServer(t)
	const id = "st"
	ms := []*member{startMember(t, srv, id, "a"), startMember(t, srv, id, "b")}
	leader := waitLeader(t, ms)
	st := leader.node.State()
	put := func(key string, value []byte) uint64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rev, err := st.Put(ctx, key, value)
		if err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		return rev
	}
	del := func(key string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := st.Delete(ctx, key); err != nil {
			t.Fatalf("delete %s: %v", key, err)
		}
	}
	modeRev := put("config.mode", []byte("fast"))
	put("config.size", []byte("3"))
	put("configx", []byte("no"))
	put("blob", []byte{0xff, 0x00, 0x01})
	put("gone", []byte("soon"))
	del("gone")
	server := []string{"-s", srv.URL(), "--cluster", id}
	cli := func(args ...string) result {
		t.Helper()
		return runCLI(t, bin, nil, append(append([]string{}, server...), args...)...)
	}

	t.Run("get", func(t *testing.T) {
		r := cli("state", "get", "config.mode")
		if r.code != 0 || r.stdout != "fast" || r.stderr != "" { // a pipe: the value as it is
			t.Errorf("get: exit %d, %q, %q", r.code, r.stdout, r.stderr)
		}
		r = cli("state", "get", "blob")
		if r.code != 0 || r.stdout != "\xff\x00\x01" {
			t.Errorf("get of bytes: exit %d, %q, %q", r.code, r.stdout, r.stderr)
		}
		r = cli("state", "get", "config.mode", "--json")
		var v stateEntryView
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 {
			t.Fatalf("get --json: exit %d, %v: %q %q", r.code, err, r.stdout, r.stderr)
		}
		if v.Key != "config.mode" || v.Value == nil || *v.Value != "fast" || v.Revision != modeRev ||
			v.Epoch != leader.node.Epoch() || v.Created.IsZero() || v.Event != "" {
			t.Errorf("get --json = %s, want fast at revision %d, epoch %d", r.stdout, modeRev, leader.node.Epoch())
		}
		r = cli("--json", "state", "get", "blob")
		v = stateEntryView{}
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Value != nil || string(v.ValueBase64) != "\xff\x00\x01" {
			t.Errorf("get --json of bytes: %v %s", err, r.stdout)
		}
		for _, key := range []string{"missing", "gone"} {
			r = cli("state", "get", key)
			if r.code != exitNoKey || r.stdout != "" || !strings.Contains(r.stderr, `key not found: "`+key+`" has no value in cluster st`) {
				t.Errorf("get %s: exit %d, %q, %q", key, r.code, r.stdout, r.stderr)
			}
		}
	})

	t.Run("ls", func(t *testing.T) {
		for _, tc := range []struct {
			args       []string
			want, says string // stdout, stderr
		}{
			{nil, "blob\nconfig.mode\nconfig.size\nconfigx\n", ""},
			{[]string{"config"}, "config.mode\nconfig.size\n", ""},
			{[]string{"config", "--json"}, "[\n  \"config.mode\",\n  \"config.size\"\n]\n", ""},
			{[]string{"nothing.here"}, "", "no state key nothing.here or below it in cluster st\n"},
			{[]string{"nothing", "--json"}, "[]\n", ""},
		} {
			r := cli(append([]string{"state", "ls"}, tc.args...)...)
			if r.code != 0 || r.stdout != tc.want || r.stderr != tc.says {
				t.Errorf("ls %q: exit %d, %q, %q; want %q, %q", tc.args, r.code, r.stdout, r.stderr, tc.want, tc.says)
			}
		}
	})

	t.Run("watch", func(t *testing.T) {
		// Text, stopping by itself: the current values of config and below.
		r := cli("state", "watch", "config", "--count", "2")
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if r.code != 0 || len(lines) != 2 || !strings.Contains(lines[0], "  put       config.mode = fast  [revision ") ||
			!strings.Contains(lines[1], "  put       config.size = 3  [revision ") {
			t.Errorf("watch --count 2: exit %d, %q, %q", r.code, r.stdout, r.stderr)
		}

		// JSON, until interrupted: the current values (not the deleted
		// key), then the changes.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append([]string{}, server...), "state", "watch", "--json")...)
		cmd.Env = cliEnv(t, nil)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		events := make(chan stateEntryView, 10)
		go func() {
			defer close(events)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				var ev stateEntryView
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Errorf("watch line %q: %v", sc.Text(), err)
					continue
				}
				events <- ev
			}
		}()
		next := func() stateEntryView {
			t.Helper()
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("watch ended early: %s", stderr.String())
				}
				return ev
			case <-time.After(20 * time.Second):
				t.Fatal("no watch event in 20s")
			}
			return stateEntryView{}
		}
		var current []string
		for range 4 {
			ev := next()
			if ev.Event != stateEventPut {
				t.Errorf("current value %+v is not a put", ev)
			}
			current = append(current, ev.Key)
		}
		if got := strings.Join(current, " "); got != "config.mode config.size configx blob" { // in the order written
			t.Errorf("current values %s", got)
		}
		rev := put("config.mode", []byte("slow"))
		if ev := next(); ev.Event != stateEventPut || ev.Key != "config.mode" || ev.Value == nil || *ev.Value != "slow" || ev.Revision != rev {
			t.Errorf("change %+v, want config.mode = slow at %d", ev, rev)
		}
		del("config.size")
		if ev := next(); ev.Event != stateEventDeleted || ev.Key != "config.size" || ev.Value != nil {
			t.Errorf("change %+v, want config.size deleted", ev)
		}
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		for range events {
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("watch: %v: %s", err, stderr.String())
		}
	})

	t.Run("reading writes nothing", func(t *testing.T) {
		// An unknown cluster is reported, and its bucket not created.
		r := cli("state", "ls", "--cluster", "nope")
		if r.code != 1 || !strings.Contains(r.stderr, `cluster not found: "nope" has no KV bucket "cluster-nope"`) {
			t.Errorf("ls of an unknown cluster: exit %d, %q", r.code, r.stderr)
		}
		js, err := jetstream.New(srv.Connect(t))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := js.KeyValue(ctx, wire.BucketName("nope")); !errors.Is(err, jetstream.ErrBucketNotFound) {
			t.Errorf("bucket of the unknown cluster: %v, want none", err)
		}
		// The leader's tenure is untouched.
		if !leader.node.IsLeader() {
			t.Error("the leader lost the lease while the CLI read the state")
		}
	})
}

// state ls on a cluster whose leader has written no state says so, on
// stderr: the output, a list of keys, stays empty (and [] with --json).
func TestCLIStateLsEmpty(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	srv := natstest.RunServer(t)
	m := startMember(t, srv, "empty", "e1")
	natstest.WaitFor(t, 15*time.Second, m.node.IsLeader, "e1 did not lead")
	server := []string{"-s", srv.URL(), "--cluster", "empty", "--timeout", "10s"}
	for _, tc := range []struct {
		args       []string
		want, says string // stdout, stderr
	}{
		{[]string{"state", "ls"}, "", "no state keys in cluster empty\n"},
		{[]string{"state", "ls", "orders"}, "", "no state key orders or below it in cluster empty\n"},
		{[]string{"state", "ls", "--json"}, "[]\n", ""},
	} {
		r := runCLI(t, bin, nil, append(append([]string{}, server...), tc.args...)...)
		if r.code != 0 || r.stdout != tc.want || r.stderr != tc.says {
			t.Errorf("%q: exit %d, %q, %q; want exit 0, %q, %q", tc.args, r.code, r.stdout, r.stderr, tc.want, tc.says)
		}
	}
}
