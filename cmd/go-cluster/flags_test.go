package main

import (
	"errors"
	"testing"
	"time"
)

func getenvOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestParse(t *testing.T) {
	none := getenvOf(nil)
	for _, tc := range []struct {
		name   string
		args   []string
		getenv func(string) string
		cmd    string
		want   options
		pos    []string
	}{
		{"defaults", []string{"--cluster", "orders", "status"}, none, "status",
			options{server: defaultServer, cluster: "orders", timeout: defaultTimeout}, nil},
		{"NATS_URL", []string{"status", "--cluster", "orders"}, getenvOf(map[string]string{"NATS_URL": "nats://a:4222,nats://b:4222"}), "status",
			options{server: "nats://a:4222,nats://b:4222", cluster: "orders", timeout: defaultTimeout}, nil},
		{"--server beats NATS_URL", []string{"-s", "nats://x:1", "--cluster", "o", "status"}, getenvOf(map[string]string{"NATS_URL": "nats://a:4222"}), "status",
			options{server: "nats://x:1", cluster: "o", timeout: defaultTimeout}, nil},
		{"flags on both sides", []string{"--server", "nats://x:1", "health", "n1", "--cluster", "o", "--json", "--timeout", "5s", "--creds", "/c"}, none, "health",
			options{server: "nats://x:1", creds: "/c", cluster: "o", timeout: 5 * time.Second, json: true}, []string{"n1"}},
		{"-- ends the flags", []string{"--cluster", "o", "health", "--", "n1"}, none, "health",
			options{server: defaultServer, cluster: "o", timeout: defaultTimeout}, []string{"n1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := parse(tc.args, tc.getenv)
			if err != nil {
				t.Fatal(err)
			}
			if inv.cmd.name != tc.cmd || inv.opts != tc.want || len(inv.args) != len(tc.pos) {
				t.Fatalf("parse = %s %+v %q, want %s %+v %q", inv.cmd.name, inv.opts, inv.args, tc.cmd, tc.want, tc.pos)
			}
			for i := range tc.pos {
				if inv.args[i] != tc.pos[i] {
					t.Errorf("args %q, want %q", inv.args, tc.pos)
				}
			}
		})
	}
}

func TestParseCommandFlags(t *testing.T) {
	inv, err := parse([]string{"--cluster", "o", "stepdown", "--to", "n2", "--wait=false"}, getenvOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	sd := inv.cmd.impl.(*stepdownCmd)
	if sd.to != "n2" || sd.wait || sd.force {
		t.Errorf("stepdown flags %+v", sd)
	}
	inv, err = parse([]string{"watch", "--count", "2", "--all", "--cluster", "o"}, getenvOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if w := inv.cmd.impl.(*watchCmd); w.count != 2 || !w.all {
		t.Errorf("watch flags %+v", w)
	}
}

func TestParseErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--cluster", "o"},
		{"--cluster", "o", "nope"},
		{"status"},
		{"--cluster", "", "status"},
		{"--cluster", "bad.id", "status"},
		{"--cluster", "o", "status", "extra"},
		{"--cluster", "o", "health", "a", "b"},
		{"--cluster", "o", "status", "--to", "x"}, // a flag of another command
		{"--cluster", "o", "--timeout", "-1s", "status"},
		{"--cluster", "o", "--timeout", "soon", "status"},
		{"-s", "", "--cluster", "o", "status"},
	} {
		if _, err := parse(args, getenvOf(nil)); !errors.Is(err, errUsage) {
			t.Errorf("parse(%q) = %v, want a usage error", args, err)
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--cluster", "o", "status", "--help"}} {
		inv, err := parse(args, getenvOf(nil))
		if err != nil || !inv.help {
			t.Errorf("parse(%q) = %+v, %v, want help", args, inv, err)
		}
	}
}

func TestExitCode(t *testing.T) {
	if exitCode(nil) != 0 || exitCode(errUsage) != 2 || exitCode(errNoCluster) != 1 {
		t.Error("exit codes")
	}
}
