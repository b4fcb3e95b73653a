package engine

// Step-down requests over NATS: the node's request server (requests.go)
// queues them for the loop, and the machine's answers go back to the
// requester.

import (
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// controlRequest is a step-down request on its way to the driver.
type controlRequest struct {
	Msg      *nats.Msg
	Generic  bool      // arrived on the cluster's control subject: only a leader answers
	Received time.Time // a request older than the current tenure was meant for its predecessor
}

// respond sends a reply if the request asked for one.
func respond(m *nats.Msg, r wire.StepDownReply) {
	if m == nil || m.Reply == "" {
		return
	}
	data, _ := json.Marshal(r) // a StepDownReply always encodes
	_ = m.Respond(data)
}

// forwardControl queues the step-down request m, received at received,
// for node nodeID's driver through out, and answers "busy" when out is
// full. It only queues: the machine decides.
func forwardControl(m *nats.Msg, generic bool, nodeID string, received time.Time, out chan<- controlRequest) {
	select {
	case out <- controlRequest{Msg: m, Generic: generic, Received: received}:
	default:
		respond(m, wire.StepDownReply{Node: nodeID, Error: "busy: too many control requests"})
	}
}
