package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	cluster "github.com/ozanturksever/go-cluster"
)

// MaxSlots bounds Config.Slots: each slot is an election of its own (a KV
// bucket, a node, a connection's watches).
const MaxSlots = 64

// SlotClusterID is the ClusterID of slot k (1-based) of cluster id: slot 1
// is the cluster itself, so that one slot is what a Runner without slots
// runs; slot k > 1 is "<id>-slot-<k>".
func SlotClusterID(id string, k int) string {
	if k <= 1 {
		return id
	}
	return id + "-slot-" + strconv.Itoa(k)
}

// errBusy is the readiness of a slot's node while the Runner's command
// runs in another slot: it keeps the node out of the election there, and
// makes it step down if it won meanwhile.
var errBusy = errors.New("this runner's command runs in another slot")

// slotConfig is the node configuration of slot k of n.
func (r *Runner) slotConfig(k, n int) cluster.Config {
	c := r.cfg.Node
	c.ClusterID = SlotClusterID(c.ClusterID, k)
	if n <= 1 {
		return c
	}
	own := c.ReadinessCheck
	c.ReadinessCheck = func(ctx context.Context) error {
		if b := r.busySlot(); b != 0 && b != k {
			return fmt.Errorf("%w (slot %d)", errBusy, b)
		}
		if own != nil {
			return own(ctx)
		}
		return nil
	}
	c.ReadinessThreshold = 1 // step down at the first check that finds it busy
	return c
}

// newSlotNode makes the node of slot k (1-based).
func (r *Runner) newSlotNode(k int) (*cluster.Node, error) {
	return cluster.NewNode(r.slotConfig(k, r.slots), hooks{r: r, slot: k})
}

// busySlot is the slot whose tenure runs the command, 0 for none.
func (r *Runner) busySlot() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.busy
}

// setBusy records the slot whose tenure runs the command (0: none).
func (r *Runner) setBusy(k int) {
	r.mu.Lock()
	r.busy = k
	r.mu.Unlock()
}

// watchNodes reports on stopped the slot of the first node that stops
// while Run runs, until Run returns.
func (r *Runner) watchNodes() <-chan int {
	stopped := make(chan int)
	for i, n := range r.nodes {
		go func() {
			select {
			case <-n.Done():
			case <-r.quit:
				return
			}
			select {
			case stopped <- i + 1:
			case <-r.quit:
			}
		}()
	}
	return stopped
}
