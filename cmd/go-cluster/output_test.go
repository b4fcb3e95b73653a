package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

func TestFmtDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		1234567 * time.Nanosecond: "1ms",
		2345 * time.Millisecond:   "2.3s",
		61500 * time.Millisecond:  "1m2s",
		0:                         "0s",
	} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestFmtCustom(t *testing.T) {
	t.Parallel()
	got := fmtCustom(map[string]any{"version": "1.4.2", "pid": 12, "ok": true})
	if want := `ok=true pid=12 version="1.4.2"`; got != want {
		t.Errorf("fmtCustom = %q, want %q", got, want)
	}
}

func TestTableTrimsTrailingSpace(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	tb := newTable(&b)
	tb.Write([]byte("a\tbb\t\nccc\td\te\n"))
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "a    bb\nccc  d   e\n"; b.String() != want {
		t.Errorf("table %q, want %q", b.String(), want)
	}
}

func TestRenderStepdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    stepdownReport
		want string
	}{
		{stepdownReport{Reply: &wire.StepDownReply{OK: true, Node: "a", Epoch: 4, To: "b"}, NewLeader: "b", NewEpoch: 5},
			"a stepped down from epoch 4, handing over to b\nb leads now, epoch 5\n"},
		{stepdownReport{Reply: &wire.StepDownReply{OK: true, Node: "a", Epoch: 4}},
			"a stepped down from epoch 4\n"},
		{stepdownReport{Reply: &wire.StepDownReply{Node: "a", Error: "not the leader", Leader: "c"}},
			"a refused: not the leader (it knows c as the leader)\n"},
		{stepdownReport{AlreadyLeader: true, NewLeader: "b", NewEpoch: 5},
			"b already leads (epoch 5): nothing to do\n"},
	} {
		var b strings.Builder
		if err := renderStepdown(&b, tc.r); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("got %q, want %q", b.String(), tc.want)
		}
	}
}

func TestRenderHealth(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	err := renderHealth(&b, []health.Response{
		{NodeID: "n1", Role: "PRIMARY", Leader: "n1", Epoch: 3, UptimeMs: 61000, Custom: map[string]any{"v": "2"}},
		{NodeID: "n2", Role: "PASSIVE", UptimeMs: 500},
		{NodeID: "n3", Error: "bad custom value"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `NODE  ROLE      READY  LEADER  EPOCH  UPTIME  CUSTOM
n1    leader    yes    n1      3      1m1s    v="2"
n2    follower  yes    -       -      500ms
n3    -         yes    -       -      -       error: bad custom value
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	// A node that is not ready: READY no, and why.
	b.Reset()
	err = renderHealth(&b, []health.Response{
		{NodeID: "n1", Role: "PRIMARY", Leader: "n1", Epoch: 3, UptimeMs: 61000},
		{NodeID: "n2", Role: "PASSIVE", Leader: "n1", Epoch: 3, UptimeMs: 500, NotReady: "cluster: not ready: 3 readiness checks failed in a row: disk full"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want = `NODE  ROLE      READY  LEADER  EPOCH  UPTIME  CUSTOM  NOTES
n1    leader    yes    n1      3      1m1s
n2    follower  no     n1      3      500ms           not ready: 3 readiness checks failed in a row: disk full
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
