package main

import (
	"fmt"
	"math"
	"strings"
)

// The layout: two panels side by side, memory and CPU, sharing the x axis
// (clusters).
const (
	panelW, panelH = 420.0, 300.0
	left, top      = 70.0, 60.0
	gap            = 90.0
)

var colours = []string{"#888888", "#1f77b4", "#2ca02c", "#9467bd"}

// draw is the SVG of every series in two panels.
func draw(title string, all []series, goalRSS, goalCPU float64) string {
	maxX := 0
	maxRSS, maxCPU := 0.0, 0.0
	for _, s := range all {
		for _, p := range s.points {
			maxX = max(maxX, p.Clusters)
			maxRSS, maxCPU = max(maxRSS, p.ServerRSSMiB), max(maxCPU, p.ServerCPUPct)
		}
	}
	var b strings.Builder
	w := left + 2*panelW + gap + 20
	h := top + panelH + 70 + 20*float64(len(all))
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="24" font-size="15">%s</text>`+"\n", left, escape(title))
	panel(&b, left, "server resident memory (MiB)", maxX, nice(max(maxRSS, goalRSS)), goalRSS, all, func(p point) float64 { return p.ServerRSSMiB })
	panel(&b, left+panelW+gap, "server CPU (% of a core)", maxX, nice(max(maxCPU, goalCPU)), goalCPU, all, func(p point) float64 { return p.ServerCPUPct })
	for i, s := range all {
		x := left
		y := top + panelH + 64 + 20*float64(i)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"/>`+"\n", x, y-4, x+24, y-4, colour(i))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", x+30, y, escape(s.label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// panel draws one quantity against clusters at x0, and its goal if not 0.
func panel(b *strings.Builder, x0 float64, name string, maxX int, maxY, goal float64, all []series, y func(point) float64) {
	px := func(c int) float64 { return x0 + panelW*float64(c)/float64(niceInt(maxX)) }
	py := func(v float64) float64 { return top + panelH - panelH*v/maxY }
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", x0, top-12, escape(name))
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#444"/>`+"\n", x0, top, panelW, panelH)
	for i, n := 0, ticks(maxY); i <= n; i++ {
		v := maxY * float64(i) / float64(n)
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/>`+"\n", x0, py(v), x0+panelW, py(v))
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", x0-6, py(v)+4, trim(v))
	}
	for i, n := 0, ticks(float64(niceInt(maxX))); i <= n; i++ {
		c := niceInt(maxX) * i / n
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`+"\n", px(c), top+panelH+16, c)
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle">clusters of 3 nodes</text>`+"\n", x0+panelW/2, top+panelH+34)
	if goal > 0 {
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#d62728" stroke-dasharray="6,4"/>`+"\n", x0, py(goal), x0+panelW, py(goal))
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end" fill="#d62728">goal %s</text>`+"\n", x0+panelW-4, py(goal)-5, trim(goal))
	}
	for i, s := range all {
		var pts []string
		for _, p := range s.points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.Clusters), py(y(p))))
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), colour(i))
		for _, p := range s.points {
			x := px(p.Clusters)
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", x, py(y(p)), colour(i))
			anchor, dx := "start", 5.0
			if x > x0+panelW-40 { // at the right edge: the value on the left
				anchor, dx = "end", -7
			}
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="10" fill="%s" text-anchor="%s">%s</text>`+"\n", x+dx, py(y(p))+labelDy(i), colour(i), anchor, trim(y(p)))
		}
	}
}

func colour(i int) string { return colours[i%len(colours)] }

// labelDy puts the first series' values above its points, the next below,
// and further ones higher up.
func labelDy(i int) float64 {
	if i == 1 {
		return 15
	}
	return -7 - float64(max(i-1, 0))*11
}

// ticks divides an axis ending at a nice value into round steps.
func ticks(end float64) int {
	if lead := end / math.Pow(10, math.Floor(math.Log10(end))); lead == 2 {
		return 4
	}
	return 5
}

// nice rounds v up to 1, 2 or 5 times a power of ten.
func nice(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func niceInt(v int) int { return int(nice(float64(v))) }

func trim(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
