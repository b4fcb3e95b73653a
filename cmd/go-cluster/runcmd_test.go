package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunUsageErrors: run refuses, before it connects, what it cannot do.
func TestRunUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", []string{"run", "--cluster", "c", "--node", "n"}, "run needs a command"},
		{"grace too long", []string{"run", "--cluster", "c", "--node", "n", "--ttl", "1s", "--grace", "5s", "--", "true"}, "grace 5s is longer than LeaseTTL 1s allows"},
		{"ttl too short", []string{"run", "--cluster", "c", "--node", "n", "--ttl", "100ms", "--", "true"}, "LeaseTTL"},
		{"bad node", []string{"run", "--cluster", "c", "--node", "a*b", "--", "true"}, "--node"},
		{"node with an empty label", []string{"run", "--cluster", "c", "--node", "db1..example.com", "--", "true"}, "--node"},
		{"no cluster", []string{"run", "--node", "n", "--", "true"}, "--cluster is required"},
		{"no slots", []string{"run", "--cluster", "c", "--node", "n", "--slots", "0", "--", "true"}, "--slots must be at least 1"},
		{"too many slots", []string{"run", "--cluster", "c", "--node", "n", "-n", "65", "--", "true"}, "slots 65: want 1 to 64"},
		{"the common --timeout", []string{"run", "--cluster", "c", "--node", "n", "--timeout", "1s", "--", "true"}, "run takes no --timeout: give up if COMMAND has not started with --start-timeout D"},
		{"--timeout before run", []string{"--timeout", "1s", "run", "--cluster", "c", "--node", "n", "--", "true"}, "run takes no --timeout"},
		{"negative start timeout", []string{"run", "--cluster", "c", "--node", "n", "--start-timeout", "-1s", "--", "true"}, "--start-timeout must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
			code := run(context.Background(), tc.args, &stdout, &stderr, func(k string) string { return env[k] })
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("stderr %q does not say %q", stderr.String(), tc.want)
			}
		})
	}
}

// TestAgentCheck: --check says whether a file is valid, and lists every
// problem with the file, the field and the line.
func TestAgentCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("clusters:\n  - name: web\n    vips:\n      - {address: 10.0.0.100/24, interface: lo}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("clusters:\n  - name: web\n    election:\n      lease_ttl: 10\n      typo: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"agent", "--check", "--config", good}, &stdout, &stderr, getenv); code != exitOK {
		t.Fatalf("good file: exit %d, stderr %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "valid (1 cluster(s))") {
		t.Fatalf("stdout %q", stdout.String())
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"agent", "--check", "--config", bad}, &stdout, &stderr, getenv); code != exitFailure {
		t.Fatalf("bad file: exit %d", code)
	}
	for _, want := range []string{
		bad + ":4: clusters[0].election.lease_ttl: 10 has no unit",
		bad + `:5: clusters[0].election.typo: unknown key "typo"`,
		"2 problem(s)",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not say %q", stderr.String(), want)
		}
	}
}
