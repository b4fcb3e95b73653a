package engine

import (
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TestOnlyTheLeaderAnswersOnTheClusterSubject: on the cluster's control
// subject only the leader answers (docs/design.md §4.8). A request a
// follower took and still held when its loop ended must not be answered
// "stopped": a requester takes the first reply, and a follower's would hide
// the leader's.
func TestOnlyTheLeaderAnswersOnTheClusterSubject(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(5 * time.Second) {
		t.Fatal("server not ready")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync(wire.ControlSubject("c"))
	if err != nil {
		t.Fatal(err)
	}
	inbox, err := nc.SubscribeSync(nats.NewInbox())
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest(wire.ControlSubject("c"), inbox.Subject, []byte(`{"to":"b"}`)); err != nil {
		t.Fatal(err)
	}
	msg, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}

	d := &driver{log: slog.New(slog.DiscardHandler), view: newNodeView("a", nil, nil), replies: map[uint64]func(election.Reply){}, finished: true}
	d.cfg.Params.NodeID = "a"
	if ev := d.controlEvent(controlRequest{Msg: msg, Generic: true, Received: time.Now()}); ev == nil {
		t.Fatal("a well-formed request gave the machine no StepDown")
	}
	d.shutdown() // the loop ends with the request still held: ErrStopped
	d.requests.Wait()
	if reply, err := inbox.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("a follower answered on the cluster's subject: %s", reply.Data)
	}
}
