package engine

import (
	"context"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// TestValidateIsProvenByARenewalSentAfterIt: ValidateLeadership proves the
// tenure with a renewal sent after the call (docs/design.md P7). A
// renewal already out when the call came is confirmed first, and its
// Extend must not answer the call: the key may have been written over
// between that renewal's send and the call.
func TestValidateIsProvenByARenewalSentAfterIt(t *testing.T) {
	v := newNodeView("a", nil, nil)
	sentBefore := v.Now()
	v.begin(&Tenure{Ctx: context.Background(), Epoch: 7, Rev: 3, Sent: sentBefore, Deadline: sentBefore.Add(time.Minute)})
	d := &driver{view: v, tenure: &driverTenure{epoch: 7, ctx: context.Background()}}
	c := command{Kind: cmdValidate, Reply: make(chan error, 1), Epoch: make(chan int64, 1)}
	if ev := d.commandEvent(c); ev == nil {
		t.Fatal("a leader's ValidateLeadership asked the machine for nothing")
	}
	d.extend(election.Extend{Epoch: 7, Deadline: sentBefore.Add(2 * time.Minute), Sent: sentBefore})
	select {
	case e := <-c.Epoch:
		t.Fatalf("answered with epoch %d by a renewal sent before the call", e)
	case err := <-c.Reply:
		t.Fatalf("answered %v by a renewal sent before the call", err)
	default:
	}
	sentAfter := v.Now()
	d.extend(election.Extend{Epoch: 7, Deadline: sentAfter.Add(2 * time.Minute), Sent: sentAfter})
	select {
	case e := <-c.Epoch:
		if e != 7 {
			t.Fatalf("proven epoch %d, want 7", e)
		}
	default:
		t.Fatal("a renewal sent after the call did not answer it")
	}
}
