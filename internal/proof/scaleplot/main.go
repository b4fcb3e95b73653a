// Command scaleplot draws figure 5's server memory and CPU against the
// number of clusters, from files that go run ./internal/proof/bench -only 5
// -scale-points FILE wrote, one series a file:
//
//	go run ./internal/proof/scaleplot -o docs/scale.svg before=/tmp/before.jsonl after=/tmp/after.jsonl
//
// A count measured more than once in a file is drawn at its mean. The SVG
// is written by hand: a plotting library would be a dependency of the
// module for one picture.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

// point is what scaleplot reads of a line of -scale-points.
type point struct {
	Clusters     int     `json:"clusters"`
	ServerCPUPct float64 `json:"server_cpu_pct"`
	ServerRSSMiB float64 `json:"server_rss_mib"`
}

// series is one file's points, by count of clusters.
type series struct {
	label  string
	points []point
}

func main() {
	out := flag.String("o", "", "the SVG file to write")
	goalRSS := flag.Float64("goal-rss", 0, "a limit to draw on the memory panel, in MiB (0: none)")
	goalCPU := flag.Float64("goal-cpu", 0, "a limit to draw on the CPU panel, in % of a core (0: none)")
	title := flag.String("title", "One nats-server: 3-node clusters, steady minute", "the plot's title")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: scaleplot -o FILE.svg LABEL=POINTS.jsonl...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var all []series
	for _, arg := range flag.Args() {
		label, path, ok := strings.Cut(arg, "=")
		if !ok || label == "" || path == "" {
			fmt.Fprintf(os.Stderr, "scaleplot: %q is not LABEL=FILE\n", arg)
			os.Exit(2)
		}
		s, err := read(label, path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "scaleplot:", err)
			os.Exit(1)
		}
		all = append(all, s)
	}
	if err := os.WriteFile(*out, []byte(draw(*title, all, *goalRSS, *goalCPU)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "scaleplot:", err)
		os.Exit(1)
	}
}

// read reads a -scale-points file, averaging repeated counts.
func read(label, path string) (series, error) {
	f, err := os.Open(path)
	if err != nil {
		return series{}, err
	}
	defer f.Close()
	sum := map[int]point{}
	n := map[int]int{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var p point
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil || p.Clusters <= 0 {
			return series{}, fmt.Errorf("%s:%d: not a scale point: %v", path, line, err)
		}
		s := sum[p.Clusters]
		s.Clusters, s.ServerCPUPct, s.ServerRSSMiB = p.Clusters, s.ServerCPUPct+p.ServerCPUPct, s.ServerRSSMiB+p.ServerRSSMiB
		sum[p.Clusters], n[p.Clusters] = s, n[p.Clusters]+1
	}
	if err := sc.Err(); err != nil {
		return series{}, err
	}
	if len(sum) == 0 {
		return series{}, errors.New(path + ": no points")
	}
	s := series{label: label}
	for c, p := range sum {
		k := float64(n[c])
		s.points = append(s.points, point{Clusters: c, ServerCPUPct: p.ServerCPUPct / k, ServerRSSMiB: p.ServerRSSMiB / k})
	}
	slices.SortFunc(s.points, func(a, b point) int { return a.Clusters - b.Clusters })
	return s, nil
}
