package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// monitor reads a server's own statistics: per-connection message and byte
// counts (Connz) and process figures (Varz). Counting on the server, not in
// the client, is what figure 3 asks for.
type monitor interface {
	connz(ctx context.Context) (*server.Connz, error)
	varz(ctx context.Context) (*server.Varz, error)
}

// connListLimit asks for every connection in one Connz page.
const connListLimit = 1 << 20

// inprocMonitor reads an embedded server directly.
type inprocMonitor struct{ s *server.Server }

func (m inprocMonitor) connz(context.Context) (*server.Connz, error) {
	return m.s.Connz(&server.ConnzOptions{Limit: connListLimit})
}

func (m inprocMonitor) varz(context.Context) (*server.Varz, error) {
	return m.s.Varz(nil)
}

// httpMonitor reads a server's HTTP monitoring endpoint, e.g.
// http://127.0.0.1:8222 (an external server, or one in a child process).
type httpMonitor struct {
	base   string
	client *http.Client
}

func newHTTPMonitor(base string) httpMonitor {
	return httpMonitor{base: strings.TrimRight(base, "/"), client: &http.Client{Timeout: 30 * time.Second}}
}

func (m httpMonitor) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s%s: %s", m.base, path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func (m httpMonitor) connz(ctx context.Context) (*server.Connz, error) {
	var c server.Connz
	if err := m.get(ctx, fmt.Sprintf("/connz?limit=%d", connListLimit), &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func (m httpMonitor) varz(ctx context.Context) (*server.Varz, error) {
	var v server.Varz
	if err := m.get(ctx, "/varz", &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// connCounts is what the server counted for one client connection. "in" is
// from the client to the server (what the client sent: KV requests), "out"
// the other way (watch deliveries, replies).
type connCounts struct {
	inMsgs, inBytes, outMsgs, outBytes int64
	subs                               uint32
}

func (c connCounts) minus(o connCounts) connCounts {
	return connCounts{c.inMsgs - o.inMsgs, c.inBytes - o.inBytes, c.outMsgs - o.outMsgs, c.outBytes - o.outBytes, c.subs}
}

// countsByName returns the counts of every open connection, by client name.
func countsByName(ctx context.Context, m monitor) (map[string]connCounts, error) {
	cz, err := m.connz(ctx)
	if err != nil {
		return nil, fmt.Errorf("connz: %w", err)
	}
	out := make(map[string]connCounts, len(cz.Conns))
	for _, c := range cz.Conns {
		out[c.Name] = connCounts{c.InMsgs, c.InBytes, c.OutMsgs, c.OutBytes, c.NumSubs}
	}
	return out, nil
}
