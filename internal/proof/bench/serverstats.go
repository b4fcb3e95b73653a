package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// runtimeStats is the Go runtime's view of a server process: what its
// HTTP monitoring does not give (varz "mem" is the resident set).
type runtimeStats struct {
	HeapAlloc  uint64 `json:"heap_alloc"`  // live heap after the GC the request asked for
	HeapInuse  uint64 `json:"heap_inuse"`  // spans in use
	StackInuse uint64 `json:"stack_inuse"` // goroutine stacks
	Sys        uint64 `json:"sys"`         // obtained from the OS
	Goroutines int    `json:"goroutines"`
}

// serveRuntimeStats serves runtimeStats as JSON on 127.0.0.1:port at
// /runtime (after a GC when asked with ?gc=1), in the server's process.
func serveRuntimeStats(port int) (stop func(), err error) {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, fmt.Errorf("runtime statistics: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/runtime", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("gc") == "1" {
			runtime.GC()
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(runtimeStats{m.HeapAlloc, m.HeapInuse, m.StackInuse, m.Sys, runtime.NumGoroutine()})
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return func() { _ = srv.Close() }, nil
}

// goStats reads the child's runtime statistics, after a GC when gc is
// set; the child must have been started with a stats port.
func (c *child) goStats(ctx context.Context, gc bool) (runtimeStats, error) {
	var rs runtimeStats
	if c.spec.statsPort == 0 {
		return rs, errors.New("no runtime statistics port")
	}
	path := "/runtime"
	if gc {
		path += "?gc=1"
	}
	err := newHTTPMonitor(fmt.Sprintf("http://127.0.0.1:%d", c.spec.statsPort)).get(ctx, path, &rs)
	return rs, err
}

// descriptors counts the child's open file descriptors: sockets and the
// rest (files, pipes, epoll).
func (c *child) descriptors() (sockets, others int, err error) {
	dir := fmt.Sprintf("/proc/%d/fd", c.cmd.Process.Pid)
	es, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range es {
		t, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if strings.HasPrefix(t, "socket:") {
			sockets++
		} else {
			others++
		}
	}
	return sockets, others, nil
}

// nofile is the child's soft descriptor limit ("Max open files").
func (c *child) nofile() (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return 0, errors.New("no Max open files in limits")
}

// limitDesc names the server process's descriptor limit for the
// parameters column ("" when the server is not a child).
func (b *backend) limitDesc() string {
	if b.srv == nil {
		return ""
	}
	n, err := b.srv.nofile()
	if err != nil {
		return ""
	}
	return fmt.Sprintf("; server descriptor limit %d", n)
}

// serverState describes a child server at a moment: its Go heap after a
// GC, goroutines, descriptors, JetStream's streams, consumers and API
// counts, and the warnings its log holds so far.
func (bn *bench) serverState(ctx context.Context, b *backend) string {
	if b.srv == nil {
		return "no server statistics"
	}
	var parts []string
	if rs, err := b.srv.goStats(ctx, true); err == nil {
		parts = append(parts, fmt.Sprintf("server Go heap %d MiB after GC (in use %d MiB, stacks %d MiB, from the OS %d MiB), %d goroutines",
			rs.HeapAlloc>>20, rs.HeapInuse>>20, rs.StackInuse>>20, rs.Sys>>20, rs.Goroutines))
	}
	if so, ot, err := b.srv.descriptors(); err == nil {
		parts = append(parts, fmt.Sprintf("descriptors %d sockets + %d others", so, ot))
	}
	var jsz server.JSInfo
	if err := b.srv.monitor().get(ctx, "/jsz", &jsz); err == nil {
		parts = append(parts, fmt.Sprintf("%d streams, %d consumers, API %d requests (%d errors)", jsz.Streams, jsz.Consumers, jsz.API.Total, jsz.API.Errors))
	}
	if w := logWarnings(b.srv.spec.logFile); w != "" {
		parts = append(parts, w)
	}
	return strings.Join(parts, "; ")
}

// clientPrefix is how the server's log names a client connection
// before its message: `127.0.0.1:50524 - cid:5 - "v1.55.0:go:name" - `.
var clientPrefix = regexp.MustCompile(`^\S+ - cid:\d+ - (?:"[^"]*" - )?`)

// logWarnings counts the server log's warnings and errors by kind ("[WRN]
// ..." up to the first digit or colon), e.g. "JetStream API queue limit
// reached" or "Internal subscription on ... took too long".
func logWarnings(path string) string {
	if path == "" {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	counts := map[string]int{}
	var kinds []string
	for _, line := range strings.Split(string(data), "\n") {
		i := strings.Index(line, "[WRN] ")
		if i < 0 {
			i = strings.Index(line, "[ERR] ")
		}
		if i < 0 {
			continue
		}
		level, msg := line[i:i+5], clientPrefix.ReplaceAllString(line[i+6:], "")
		if j := strings.IndexAny(msg, "0123456789:\""); j >= 0 {
			msg = msg[:j]
		}
		k := strings.TrimSpace(level + " " + msg)
		if counts[k] == 0 {
			kinds = append(kinds, k)
		}
		counts[k]++
	}
	if len(kinds) == 0 {
		return "server log: no warnings"
	}
	var out []string
	for _, k := range kinds {
		out = append(out, fmt.Sprintf("%dx %q", counts[k], k))
	}
	return "server log (" + path + "): " + strings.Join(out, ", ")
}
