package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/nats-io/nats.go"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// MaintenanceSubject is where the agent's node nodeID of cluster
// clusterID answers maintenance requests:
// "cluster.<ClusterID>.agent.<NodeID>.maintenance", the NodeID as its
// subject token (wire.NodeIDToken: a host name's dots written '=').
func MaintenanceSubject(clusterID, nodeID string) string {
	return "cluster." + clusterID + ".agent." + wire.NodeIDToken(nodeID) + ".maintenance"
}

// MaintenanceRequest switches a node's maintenance mode.
type MaintenanceRequest struct {
	On bool `json:"on"`
}

// MaintenanceReply is the node's answer.
type MaintenanceReply struct {
	Node        string `json:"node"`
	Maintenance bool   `json:"maintenance"` // the mode now
	// File is the maintenance_file created or removed, when one is
	// configured: the mode then outlives a restart of the agent.
	File  string `json:"file,omitempty"`
	Error string `json:"error,omitempty"`
}

// serveMaintenance answers maintenance requests on the node's connection.
// Maintenance makes the node not ready, as a failing check does: a leader
// steps down, a follower does not campaign.
func (m *member) serveMaintenance(node *cluster.Node) {
	sub, err := node.Conn().Subscribe(MaintenanceSubject(node.Config().ClusterID, node.Config().NodeID), func(msg *nats.Msg) {
		reply := m.maintenance(msg.Data)
		data, _ := json.Marshal(reply)
		_ = msg.Respond(data)
	})
	if err != nil {
		m.log.Warn("maintenance requests will not be answered", "err", err)
		return
	}
	m.mu.Lock()
	m.maintSub = sub
	m.mu.Unlock()
}

// stopMaintenance stops answering maintenance requests.
func (m *member) stopMaintenance() {
	m.mu.Lock()
	sub := m.maintSub
	m.maintSub = nil
	m.mu.Unlock()
	if sub != nil {
		_ = sub.Unsubscribe()
	}
}

// maintenance carries out one request.
func (m *member) maintenance(data []byte) MaintenanceReply {
	cfg := m.config()
	reply := MaintenanceReply{Node: cfg.Election.NodeID}
	var req MaintenanceRequest
	if err := json.Unmarshal(data, &req); err != nil {
		reply.Error = fmt.Sprintf("bad request: %v", err)
		return reply
	}
	if f := cfg.MaintenanceFile; f != "" {
		reply.File = f
		var err error
		if req.On {
			err = os.WriteFile(f, []byte("maintenance switched on by go-cluster maintenance\n"), 0o644)
		} else if err = os.Remove(f); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		if err != nil {
			reply.Error = err.Error()
		}
	}
	m.mu.Lock()
	r := m.ready
	m.mu.Unlock()
	r.setMaintenance(req.On)
	reply.Maintenance = req.On
	m.log.Warn("maintenance switched", "on", req.On)
	return reply
}
