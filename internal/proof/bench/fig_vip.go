package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// vipRuns is how many times figure 7 runs the vip benchmark (go test -count).
const vipRuns = 3

// figVIP runs the vip package's own benchmark (figure 7): acquire + first
// announcement through netlink against `ip addr add` + `arping`, and
// release against `ip addr del`, in a network namespace, side by side in
// one go test run. It needs root, the module's source and the go command.
func (bn *bench) figVIP(ctx context.Context) []row {
	const fig = "7"
	if os.Geteuid() != 0 {
		return []row{skipped(fig, "VIP", "needs root (network namespaces)")}
	}
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(gomod)) == "" || strings.TrimSpace(string(gomod)) == os.DevNull {
		return []row{skipped(fig, "VIP", "run from the module's source tree with the go command installed")}
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if _, err := os.Stat(filepath.Join(root, "vip", "bench_linux_test.go")); err != nil {
		return []row{skipped(fig, "VIP", "the vip package has no benchmark in this tree")}
	}
	args := []string{"test", "-run", "^$", "-bench", "^Benchmark(AcquireAnnounce|Release)$", "-benchtime", bn.o.vipTime,
		"-count", strconv.Itoa(vipRuns), "./vip/"}
	bn.log.Info("vip: go " + strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CI=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return []row{failed(fig, "VIP", fmt.Errorf("go test: %v: %s", err, lastLines(out, 5)))}
	}
	res := parseBench(out)
	params := fmt.Sprintf("veth pair between 2 namespaces, go test -benchtime %s -count %d, median of the runs' ns/op", bn.o.vipTime, vipRuns)
	var rows []row
	for _, set := range []struct {
		bench, what, base string
		variants          []string
	}{
		{"AcquireAnnounce", "acquire + first announcement", "vip", []string{"vip", "vip-netns", "ip+arping", "ip+arping-w0"}},
		{"Release", "release", "vip", []string{"vip", "vip-netns", "ip"}},
	} {
		base := res[set.bench+"/"+set.base]
		for _, v := range set.variants {
			r, ok := res[set.bench+"/"+v]
			if !ok {
				continue
			}
			m := summarize(r.durs)
			row := row{fig: fig, name: fmt.Sprintf("VIP %s: %s", set.what, v), params: params, n: len(r.durs) * r.ops,
				median: ms(m.median), p99: "-", note: vipNote(v)}
			if v != set.base && len(base.durs) > 0 {
				row.note += fmt.Sprintf("; %.1f x vip", ratio(m.median, summarize(base.durs).median))
			}
			if r.frames != "" {
				row.note += "; frames/op " + r.frames
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return []row{failed(fig, "VIP", fmt.Errorf("no benchmark results: %s", lastLines(out, 5)))}
	}
	return rows
}

func vipNote(variant string) string {
	switch variant {
	case "vip":
		return "this package, on a thread already in the namespace"
	case "vip-netns":
		return "this package entering the namespace per operation (Config.NetNS)"
	case "ip+arping":
		return "ip addr add + arping -U -c 1, as the original code ran them (arping waits ~1 s for a reply)"
	case "ip+arping-w0":
		return "the same with arping -w 0 (send and exit)"
	case "ip":
		return "ip addr del"
	}
	return ""
}

// benchResult is one sub-benchmark over the runs.
type benchResult struct {
	durs   []time.Duration // ns/op of each run
	ops    int             // iterations per run
	frames string          // frames/op of the last run
}

var benchLine = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+(\d+)\s+([\d.]+) ns/op(.*)$`)
var framesField = regexp.MustCompile(`([\d.]+) frames/op`)

// parseBench reads go test -bench output.
func parseBench(out []byte) map[string]benchResult {
	res := map[string]benchResult{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		ops, _ := strconv.Atoi(m[2])
		ns, _ := strconv.ParseFloat(m[3], 64)
		r := res[m[1]]
		r.durs = append(r.durs, time.Duration(ns))
		r.ops = ops
		if f := framesField.FindStringSubmatch(m[4]); f != nil {
			r.frames = f[1]
		}
		res[m[1]] = r
	}
	return res
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " / ")
}
