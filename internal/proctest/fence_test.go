package proctest

import (
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// fenceServer is the fenced resource the node processes write to over
// HTTP on 127.0.0.1: it accepts a write only with an epoch at least the
// highest it has accepted.
type fenceServer struct {
	url string

	mu      sync.Mutex
	highest int64
	writes  []fenceRecord
}

// fenceRecord is one write the fence received.
type fenceRecord struct {
	At    time.Time
	Node  string
	Epoch int64
	Stale bool // the node's stale probe after its tenure ended
	OK    bool
}

func startFence(t *testing.T) *fenceServer {
	t.Helper()
	f := &fenceServer{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(f.handle), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	f.url = "http://" + ln.Addr().String() + "/write"
	return f
}

func (f *fenceServer) handle(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Node  string `json:"node"`
		Epoch int64  `json:"epoch"`
		Stale bool   `json:"stale"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	ok := req.Epoch >= f.highest
	if ok {
		f.highest = req.Epoch
	}
	f.writes = append(f.writes, fenceRecord{At: time.Now(), Node: req.Node, Epoch: req.Epoch, Stale: req.Stale, OK: ok})
	highest := f.highest
	f.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": ok, "highest": highest})
}

// records returns the writes received so far.
func (f *fenceServer) records() []fenceRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fenceRecord(nil), f.writes...)
}
