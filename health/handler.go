package health

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// handle answers one request, on the subscription's goroutine.
func (c *Checker) handle(m *nats.Msg) {
	if !c.enter() {
		return
	}
	defer c.inflight.Done()

	if m.Reply == "" {
		c.log.Debug("health: request without reply subject ignored", "subject", m.Subject)
		return
	}
	var reply []byte
	if err := validateRequest(m.Data); err != nil {
		c.log.Debug("health: rejected request", "subject", m.Subject, "size", len(m.Data), "error", err)
		reply = c.errorReply(err)
	} else {
		var err error
		if _, reply, err = c.build(); err != nil {
			c.log.Warn("health: cannot encode response", "error", err)
		}
	}
	if err := m.Respond(reply); err != nil {
		c.log.Debug("health: reply not sent", "subject", m.Subject, "error", err)
	}
}

// enter registers a request being answered; false once Stop has begun.
func (c *Checker) enter() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.status != statusRunning {
		return false
	}
	c.inflight.Add(1)
	return true
}

// build encodes the current Response. When it cannot be encoded (a custom
// value is not JSON), it returns an error reply and the error.
func (c *Checker) build() (Response, []byte, error) {
	r := Response{NodeID: c.cfg.NodeID}
	c.state.snapshot(&r, time.Now())
	data, err := json.Marshal(r)
	if err != nil {
		err = fmt.Errorf("encode response: %w", err)
		return Response{NodeID: r.NodeID, Timestamp: r.Timestamp, NotReady: r.NotReady, Error: err.Error()}, c.errorReply(err), err
	}
	return r, data, nil
}

// errorReply encodes an error reply carrying err's text, and the node's
// readiness: a node that cannot encode its custom values is still asked
// whether it may take a handover.
func (c *Checker) errorReply(err error) []byte {
	data, mErr := json.Marshal(errorReply{
		NodeID: c.cfg.NodeID, Timestamp: time.Now().UnixMilli(), NotReady: c.state.notReady(), Error: err.Error(),
	})
	if mErr != nil { // cannot happen: only strings and an int
		return []byte(`{"error":"internal error"}`)
	}
	return data
}
