package agent

// /livez and /readyz: the probes load balancers, Kubernetes and
// monitoring read by their status code. Each cluster answers with the
// library's meaning (cluster.Node.HealthzHandler); the agent adds what
// its node cannot know: a node not started yet, and NATS lost.

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// probeKind is what a probe asks: liveness or readiness.
type probeKind string

const (
	probeLive  probeKind = "live"
	probeReady probeKind = "ready"
)

// probe answers kind for the member: nil when it holds, else why not,
// as the library's handler words it after "not live: " or "not ready: ".
func (m *member) probe(kind probeKind) error {
	m.mu.Lock()
	node, started := m.node, m.started
	m.mu.Unlock()
	if node == nil || !started {
		if kind == probeLive {
			return nil // the agent is trying to reach NATS: alive
		}
		return errNotStartedYet
	}
	if kind == probeReady {
		if lost, _, _ := m.nats.state(); lost {
			return fmt.Errorf("%s", m.nats.lostReason())
		}
	}
	rec := &probeRecorder{header: http.Header{}}
	req, err := http.NewRequest(http.MethodGet, "/"+string(kind)+"z", nil)
	if err != nil {
		return err
	}
	node.HealthzHandler().ServeHTTP(rec, req)
	if rec.code == 0 || rec.code == http.StatusOK {
		return nil
	}
	why := strings.TrimSpace(rec.body.String())
	return fmt.Errorf("%s", strings.TrimPrefix(why, "not "+string(kind)+": "))
}

// errNotStartedYet is the readiness of a member whose node has not
// started: NATS not reached yet, or the start refused (and retried).
var errNotStartedYet = errors.New("not connected to NATS yet")

// probeRecorder keeps what the library's handler writes.
type probeRecorder struct {
	header http.Header
	code   int
	body   strings.Builder
}

func (r *probeRecorder) Header() http.Header { return r.header }

func (r *probeRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *probeRecorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// serveProbe answers GET /livez, /readyz (every cluster) and
// /livez/NAME, /readyz/NAME (one): 200 "ok", or 503 "not live: why" /
// "not ready: why" (all clusters: one line per cluster that fails,
// "cluster NAME: not ready: why"), in plain text; 404 for a cluster
// the agent does not run.
func (a *Agent) serveProbe(kind probeKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("cluster")
		a.mu.Lock()
		var members []*member
		for n, m := range a.members {
			if name == "" || n == name {
				members = append(members, m)
			}
		}
		a.mu.Unlock()
		if name != "" && len(members) == 0 {
			http.NotFound(w, r)
			return
		}
		var lines []string
		for _, m := range members {
			err := m.probe(kind)
			switch {
			case err == nil:
			case name != "":
				lines = append(lines, fmt.Sprintf("not %s: %v", kind, err))
			default:
				lines = append(lines, fmt.Sprintf("cluster %s: not %s: %v", m.config().Name, kind, err))
			}
		}
		slices.Sort(lines)
		h := w.Header()
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		if len(lines) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintln(w, strings.Join(lines, "\n"))
			return
		}
		_, _ = fmt.Fprintln(w, "ok")
	}
}
