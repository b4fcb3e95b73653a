package election

// The record go-cluster init --upgrade leaves in the lease key of a bucket
// it moves to this protocol (docs/design.md §5.9).

import "time"

// ReleasedRecord is a released record of this protocol at epoch, written
// at at (acquired_at and expires_at both): no holder, no named successor.
// Over a bucket whose old nodes are all stopped, it lets the first new
// node lead at once (P5) when epoch is in the incarnation's range (P1).
func ReleasedRecord(epoch int64, at time.Time) []byte {
	return released(epoch, at, at, "")
}
