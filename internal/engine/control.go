package engine

// Step-down requests over NATS: the subscriptions queue them for the loop,
// and the machine's answers go back to the requester.

import (
	"encoding/json"
	"fmt"
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

// subscribeControl forwards step-down requests to node nodeID's driver
// through out, each received at now (the view's clock). The callback only
// queues: the machine decides, never a NATS goroutine.
func subscribeControl(nc *nats.Conn, clusterID, nodeID string, now func() time.Time, out chan<- controlRequest) ([]*nats.Subscription, error) {
	forward := func(generic bool) nats.MsgHandler {
		return func(m *nats.Msg) {
			select {
			case out <- controlRequest{Msg: m, Generic: generic, Received: now()}:
			default:
				respond(m, wire.StepDownReply{Node: nodeID, Error: "busy: too many control requests"})
			}
		}
	}
	var subs []*nats.Subscription
	for _, s := range []struct {
		subject string
		generic bool
	}{{wire.ControlSubject(clusterID), true}, {wire.NodeControlSubject(clusterID, nodeID), false}} {
		sub, err := nc.Subscribe(s.subject, forward(s.generic))
		if err != nil {
			for _, done := range subs {
				_ = done.Unsubscribe()
			}
			return nil, fmt.Errorf("subscribe %s: %w", s.subject, err)
		}
		subs = append(subs, sub)
	}
	return subs, nil
}
