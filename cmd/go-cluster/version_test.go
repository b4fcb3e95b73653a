package main

import (
	"context"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestDescribeBuild(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"release", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}},
			"go-cluster v1.4.0, built with go1.26.8"},
		{"source tree with its commit", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "e56d1ed0123456789abcdef0123456789abcdef0"},
			{Key: "vcs.time", Value: "2026-11-25T10:32:16Z"}, {Key: "vcs.modified", Value: "true"},
		}}, "go-cluster (devel), commit e56d1ed0123456789abcdef0123456789abcdef0 of 2026-11-25T10:32:16Z with uncommitted changes, built with go1.26.8"},
		{"clean tree", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261125103216-e56d1ed01234"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "e56d1ed01234"}, {Key: "vcs.modified", Value: "false"},
		}}, "go-cluster v0.0.0-20261125103216-e56d1ed01234, commit e56d1ed01234, built with go1.26.8"},
		{"no version at all", debug.BuildInfo{}, "go-cluster (devel)"},
	} {
		if got := describeBuild(&tc.bi); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// The built binary prints the version the go tool stamped into it (and
// its commit, when stamped), with --version or the version command.
func TestCLIVersion(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	var version, revision string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/ozanturksever/go-cluster":
			version = f[2]
		case len(f) >= 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			revision = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	if version == "" {
		t.Fatalf("go version -m names no version of the module:\n%s", out)
	}
	want := "go-cluster " + version
	if revision != "" {
		want += ", commit " + revision
	}
	for _, args := range [][]string{{"--version"}, {"version"}, {"-s", "nats://127.0.0.1:1", "version"}, {"--version", "status"}} {
		r := runCLI(t, bin, nil, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, want) || !strings.HasSuffix(r.stdout, "\n") || strings.Count(r.stdout, "\n") != 1 || r.stderr != "" {
			t.Errorf("%q: exit %d, %q, %q; want one line starting %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	r := runCLI(t, bin, nil, "version", "extra")
	if r.code != exitUsage || !strings.Contains(r.stderr, `unexpected argument "extra"`) {
		t.Errorf("version extra: exit %d, %q", r.code, r.stderr)
	}
	r = runCLI(t, bin, nil, "help")
	if !strings.Contains(r.stdout, "\n  version\n") {
		t.Errorf("help does not list version:\n%s", r.stdout)
	}
}
