package engine

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/presence"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TestRequestServerServesStepDownAndStatusSubjects: the node's request
// server queues step-down requests from the cluster's control subject
// (Generic) and the node's, stamped when read, answers "busy" when the
// loop's queue is full, answers status requests on both status subjects,
// and after Stop and Wait nobody answers and its goroutine has ended.
func TestRequestServerServesStepDownAndStatusSubjects(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	nc := srv.Connect(t)
	asker := srv.Connect(t)
	self := presence.Self{ClusterID: "c", NodeID: "a", Instance: "i1"}
	control := make(chan controlRequest, 1)
	r, err := serveRequests(nc, self, time.Now, control, func() presence.View { return presence.View{Leading: true, Leader: "a", Epoch: 4} })
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil { // the server knows the subscriptions
		t.Fatal(err)
	}
	for _, c := range []struct {
		subject string
		generic bool
	}{{wire.ControlSubject("c"), true}, {wire.NodeControlSubject("c", "a"), false}} {
		sent := time.Now()
		if err := asker.PublishRequest(c.subject, "reply", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		select {
		case req := <-control:
			if req.Generic != c.generic || req.Msg.Subject != c.subject || req.Received.Before(sent) {
				t.Errorf("on %s: queued %+v, want Generic %v received after %s", c.subject, req, c.generic, sent)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no step-down request queued from %s", c.subject)
		}
	}
	control <- controlRequest{} // the loop's queue full: the next is answered busy
	msg, err := asker.Request(wire.NodeControlSubject("c", "a"), []byte(`{}`), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var busy wire.StepDownReply
	if err := json.Unmarshal(msg.Data, &busy); err != nil || busy.Node != "a" || busy.Error == "" {
		t.Errorf("with the queue full: %s (%v), want a busy reply from a", msg.Data, err)
	}
	for _, subject := range []string{wire.StatusSubject("c", "a"), wire.ClusterStatusSubject("c")} {
		msg, err := asker.Request(subject, nil, 5*time.Second)
		if err != nil {
			t.Fatalf("status on %s: %v", subject, err)
		}
		var st wire.StatusReply
		if err := json.Unmarshal(msg.Data, &st); err != nil || st.Node != "a" || st.Role != wire.StatusLeader || st.Epoch != 4 {
			t.Errorf("status on %s: %s (%v)", subject, msg.Data, err)
		}
	}
	r.Stop()
	r.Wait()
	r.Stop() // a second Stop does nothing
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := asker.Request(wire.StatusSubject("c", "a"), nil, time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Errorf("status after Stop: %v, want no responders", err)
	}
}
