package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentCheckWarnsOfAShortLeaseOnAReplicatedBucket: --check prints a
// warning for a lease_ttl a stream leader election outlasts on a
// replicated bucket, and still exits 0 (the file is valid).
func TestAgentCheckWarnsOfAShortLeaseOnAReplicatedBucket(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "a.yaml")
	if err := os.WriteFile(file, []byte("clusters:\n  - name: web\n    election:\n      lease_ttl: 2s\n      replicas: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"agent", "--check", "--config", file}, &stdout, &stderr, func(k string) string { return env[k] }); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	want := "warning: " + file + ":4: clusters[0].election.lease_ttl: 2s gives the leader"
	if !strings.Contains(stdout.String(), "valid (1 cluster(s))") || !strings.Contains(stderr.String(), want) {
		t.Fatalf("stdout %q, stderr %q: want valid, and %q", stdout.String(), stderr.String(), want)
	}
}
