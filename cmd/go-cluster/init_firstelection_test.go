package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestCLIInitSaysWhenTheFirstElectionCanBe: init of a new bucket says
// when its first election can happen, the bucket's creation plus its TTL
// ceiling (docs/design.md P6), and does not promise one at once. On main
// it said nothing of the wait, and the first node logged that init lets
// it "start at once" while it waited about 3 s (issue 41, item 8).
func TestCLIInitSaysWhenTheFirstElectionCanBe(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	bin := buildCLI(t)
	srv := natstest.RunServer(t)
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	r := runCLI(t, bin, nil, "-s", srv.URL(), "init", "--cluster", "first", "--lease-ttl", "4s")
	created := bucketCreated(ctx, t, js, "first")
	want := "first election: not before " + created.Add(4*time.Second).UTC().Format(time.RFC3339Nano) +
		" (4s, the bucket's TTL ceiling, after its creation: docs/design.md P6); a node started later leads at once\n"
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("init: exit %d, stdout %q, stderr %q; want a line %q", r.code, r.stdout, r.stderr, want)
	}
	if strings.Contains(r.stdout+r.stderr, "at once\n") && !strings.Contains(r.stdout, "started later leads at once") {
		t.Errorf("init promises an election at once: %q", r.stdout)
	}

	r = runCLI(t, bin, nil, "-s", srv.URL(), "init", "--cluster", "first2", "--lease-ttl", "4s", "--json")
	var rep initReport
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil {
		t.Fatalf("init --json: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if w := bucketCreated(ctx, t, js, "first2").Add(4 * time.Second); rep.FirstElection == nil || !rep.FirstElection.Equal(w) {
		t.Errorf("init --json: first_election %v, want %v", rep.FirstElection, w)
	}

	// An existing bucket: init says nothing of a first election.
	r = runCLI(t, bin, nil, "-s", srv.URL(), "init", "--cluster", "first")
	if r.code != 0 || strings.Contains(r.stdout, "first election") {
		t.Errorf("init of an existing bucket: exit %d, %q", r.code, r.stdout)
	}
}
