package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRunUsageErrors: run refuses, before it connects, what it cannot do.
func TestRunUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", []string{"run", "--cluster", "c", "--node", "n"}, "run needs a command"},
		{"grace too long", []string{"run", "--cluster", "c", "--node", "n", "--ttl", "1s", "--grace", "5s", "--", "true"}, "grace 5s is longer than LeaseTTL 1s allows"},
		{"ttl too short", []string{"run", "--cluster", "c", "--node", "n", "--ttl", "100ms", "--", "true"}, "LeaseTTL"},
		{"bad node", []string{"run", "--cluster", "c", "--node", "a*b", "--", "true"}, "--node"},
		{"no cluster", []string{"run", "--node", "n", "--", "true"}, "--cluster is required"},
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
