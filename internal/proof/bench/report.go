package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the result table.
type row struct {
	fig    string // figure number, "1" to "8"
	name   string // what is measured
	params string // the parameters it was measured with
	n      int    // number of samples (0 when not a sample count)
	median string
	p99    string
	goal   string // the goal, if any
	met    string // "yes", "no" or "" (no goal)
	note   string // ratios, breakdowns, what gave
}

// latencyRow fills n, median and p99 from ds.
func latencyRow(fig, name, params string, ds []time.Duration) row {
	s := summarize(ds)
	r := row{fig: fig, name: name, params: params, n: s.n}
	if s.n > 0 {
		r.median, r.p99 = ms(s.median), ms(s.p99)
	} else {
		r.median, r.p99 = "-", "-"
	}
	return r
}

// withGoal sets the goal text and whether ok met it.
func (r row) withGoal(goal string, ok bool) row {
	r.goal = goal
	r.met = "no"
	if ok {
		r.met = "yes"
	}
	return r
}

// skipped is a row for a figure that could not run here.
func skipped(fig, name, why string) row {
	return row{fig: fig, name: name, median: "-", p99: "-", note: "skipped: " + why}
}

// header is the table's column names.
func header() []string {
	return []string{"fig", "measure", "parameters", "n", "median", "p99", "goal", "met", "notes"}
}

func (r row) cells() []string {
	n := ""
	if r.n > 0 {
		n = fmt.Sprint(r.n)
	}
	return []string{r.fig, r.name, r.params, n, r.median, r.p99, r.goal, r.met, r.note}
}

// printText writes rows as an aligned text table.
func printText(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header(), "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r.cells(), "\t"))
	}
	tw.Flush()
}

// printMarkdown writes rows as a Markdown table.
func printMarkdown(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| "+strings.Join(header(), " | ")+" |")
	fmt.Fprintln(w, "|"+strings.Repeat("---|", len(header())))
	for _, r := range rows {
		cells := r.cells()
		for i, c := range cells {
			cells[i] = strings.ReplaceAll(c, "|", "\\|")
		}
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
}
