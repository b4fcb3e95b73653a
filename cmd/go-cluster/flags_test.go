package main

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func getenvOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		cmd  string
		want options
		pos  []string
	}{
		{"defaults", []string{"--cluster", "orders", "status"}, "status",
			options{cluster: "orders", timeout: defaultTimeout}, nil},
		{"-s", []string{"-s", "nats://x:1", "--cluster", "o", "status"}, "status",
			options{conn: connFlags{server: "nats://x:1"}, cluster: "o", timeout: defaultTimeout}, nil},
		{"flags on both sides", []string{"--server", "nats://x:1", "health", "n1", "--cluster", "o", "--json", "--timeout", "5s", "--creds", "/c"}, "health",
			options{conn: connFlags{server: "nats://x:1", creds: "/c"}, cluster: "o", timeout: 5 * time.Second, json: true, timeoutGiven: true}, []string{"n1"}},
		{"connection flags", []string{"--context", "prod", "--user", "u", "--password", "p", "status", "--nkey", "/n", "--tlscert", "/c", "--tlskey", "/k", "--tlsca", "/ca", "--cluster", "o"}, "status",
			options{conn: connFlags{context: "prod", user: "u", password: "p", nkey: "/n", tlsCert: "/c", tlsKey: "/k", tlsCA: "/ca"}, cluster: "o", timeout: defaultTimeout}, nil},
		{"-- ends the flags", []string{"--cluster", "o", "health", "--", "n1"}, "health",
			options{cluster: "o", timeout: defaultTimeout}, []string{"n1"}},
		{"a command of a group", []string{"--cluster", "o", "state", "get", "--json", "config.mode"}, "state get",
			options{cluster: "o", timeout: defaultTimeout, json: true}, []string{"config.mode"}},
		{"a group after flags", []string{"--json", "state", "ls", "--cluster", "o"}, "state ls",
			options{cluster: "o", timeout: defaultTimeout, json: true}, nil},
		{"name=value", []string{"--cluster=o", "status", "--server=nats://x:1", "--json=false", "--timeout=1s"}, "status",
			options{conn: connFlags{server: "nats://x:1"}, cluster: "o", timeout: time.Second, timeoutGiven: true}, nil},
		{"one dash, as the standard library took it", []string{"-cluster=o", "status", "-server", "nats://x:1", "-json", "-timeout", "1s", "-s", "nats://y:1"}, "status",
			options{conn: connFlags{server: "nats://y:1"}, cluster: "o", json: true, timeout: time.Second, timeoutGiven: true}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := parse(tc.args)
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
	t.Parallel()
	inv, err := parse([]string{"--cluster", "o", "stepdown", "--to", "n2", "--wait=false"})
	if err != nil {
		t.Fatal(err)
	}
	sd := inv.cmd.impl.(*stepdownCmd)
	if sd.to != "n2" || sd.wait || sd.force {
		t.Errorf("stepdown flags %+v", sd)
	}
	inv, err = parse([]string{"watch", "--count", "2", "--all", "--cluster", "o"})
	if err != nil {
		t.Fatal(err)
	}
	if w := inv.cmd.impl.(*watchCmd); w.count != 2 || !w.all {
		t.Errorf("watch flags %+v", w)
	}
	inv, err = parse([]string{"--cluster", "o", "state", "watch", "orders", "--count", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if w := inv.cmd.impl.(*stateWatchCmd); w.count != 3 || len(inv.args) != 1 || inv.args[0] != "orders" {
		t.Errorf("state watch flags %+v, args %q", w, inv.args)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
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
		{"--cluster", "o", "status", "--context", ""},
		{"--cluster", "o", "state"},                 // a group alone
		{"--cluster", "o", "state", "--json", "ls"}, // flags between a group and its command
		{"--cluster", "o", "state", "put", "k"},
		{"--cluster", "o", "get", "k"}, // a command of a group without it
		{"--cluster", "o", "state", "get", "a", "b"},
		{"--cluster", "o", "state", "ls", "--all"}, // a flag of another command
	} {
		if _, err := parse(args); !errors.Is(err, errUsage) {
			t.Errorf("parse(%q) = %v, want a usage error", args, err)
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--cluster", "o", "status", "--help"}} {
		inv, err := parse(args)
		if err != nil || !inv.help {
			t.Errorf("parse(%q) = %+v, %v, want help", args, inv, err)
		}
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	if exitCode(nil) != 0 || exitCode(errUsage) != 2 || exitCode(errNoCluster) != 1 || exitCode(noLeader(leaseState{State: stateAbsent})) != 3 || exitCode(errContext) != 1 ||
		exitCode(fmt.Errorf("x: %w", errNotReady)) != 4 || exitCode(fmt.Errorf("x: %w", errNoKey)) != 5 {
		t.Error("exit codes")
	}
}
