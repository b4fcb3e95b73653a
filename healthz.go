package cluster

// Liveness and readiness over HTTP, for probes such as Kubernetes' (like
// client-go's HealthzAdaptor).

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/ozanturksever/go-cluster/internal/engine"
)

// HealthzHandler returns an http.Handler that answers liveness and
// readiness probes for n. A request whose path ends in "/livez" gets
// liveness, one ending in "/readyz" readiness, any other 404; so it can be
// mounted at those paths or under a prefix:
//
//	mux.Handle("/livez", node.HealthzHandler())
//	mux.Handle("/readyz", node.HealthzHandler())
//
// A healthy answer is 200 with the body "ok"; an unhealthy one is 503
// with "not live: <why>" or "not ready: <why>", in plain text, one line.
//
// Live: the node is not stopped (Done is open; before Start it is live),
// and, while it leads, a renewal has succeeded within RenewInterval +
// RequestTimeout: a renewal was due and has had its whole time to answer.
// So a leader cut off from NATS is reported not live while it still
// leads, before its deadline (LeaseTTL - SafetyMargin after its last
// successful renewal was sent); once its tenure ends it follows, and is
// live again. If that bound is past the deadline, liveness never fails for
// it: the tenure ends first.
//
// Ready: the node has started (not still starting, not stopped), and Ready
// returns nil (its Config.ReadinessCheck, if any, passes).
func (n *Node) HealthzHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		var what string
		switch {
		case strings.HasSuffix(r.URL.Path, "/livez"):
			err, what = n.eng.Snapshot().Live, "live"
		case strings.HasSuffix(r.URL.Path, "/readyz"):
			err, what = readiness(n.eng.Snapshot()), "ready"
		default:
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, "not %s: %v\n", what, err)
			return
		}
		_, _ = fmt.Fprintln(w, "ok")
	})
}

// readiness is nil once the node has started, while it runs and Ready is
// nil.
func readiness(s engine.Snapshot) error {
	if s.Running != nil {
		return s.Running
	}
	return s.Ready
}
