package chaos

// What FaultGarbage (and long-ttl-garbage) write into the lease key: the
// values docs/design.md §5 puts in scope. Each is unknown to the nodes
// (P1): a leader seeing one demotes, followers wait the ceiling and take
// it over at base + revision + 1 (P2), above every epoch before.
//
// Decodable records are all of this protocol ("v":3) at an epoch outside
// their incarnation's range (base, base + revision]: below it, at the
// base, just above it, at MaxInt64. A record of another version (none
// at all is protocol 1) is in scope at run time too, but Start refuses a
// bucket whose key holds one (ErrProtocolVersion, §5.9: old and new nodes
// never share a bucket), so a node the schedule restarts meanwhile would
// stop for a reason the library documents and the run could not tell from
// a failure. So the run writes none; the machine's rows cover them.
// Forged well-formed records in range are out of scope (§5.5): they can
// end a tenure or repeat an epoch by design.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// epochAt says where an out-of-range record's epoch lies.
type epochAt int

const (
	atOne      epochAt = iota // 1: below every incarnation's base
	atBase                    // the base itself: one below the range
	aboveRange                // base + revision + 1: one above the range
	atMax                     // math.MaxInt64
)

// outOfRange describes a lease record of this protocol at an epoch
// outside its incarnation's range.
type outOfRange struct {
	at       epochAt
	released bool // no holder: it must not be taken as a hand-back (P5)
	leader   bool // held under the current leader's NodeID: not its own (P9)
}

// garbage is one value FaultGarbage writes.
type garbage struct {
	name string
	data []byte      // a fixed value
	op   string      // "delete" or "purge": a marker instead
	rec  *outOfRange // a record made for the incarnation it lands in
}

// garbageValues are what FaultGarbage writes into the lease key.
var garbageValues = []garbage{
	{name: "not JSON", data: []byte("{not json")},
	{name: "empty", data: []byte{}},
	{name: "binary", data: []byte{0, 0xff, 0xfe, 1, 2, 3}},
	{name: "negative epoch", data: []byte(`{"v":3,"node_id":"x","epoch":-1}`)},
	{name: "wrong types", data: []byte(`{"v":3,"node_id":5,"epoch":"high"}`)},
	{name: "oversized", data: bytes.Repeat([]byte("x"), 8<<10)},
	{name: "delete marker", op: "delete"},
	{name: "purge marker", op: "purge"},
	{name: "v2 record held by ghost at epoch 1", rec: &outOfRange{at: atOne}},
	{name: "v2 release at epoch 1", rec: &outOfRange{at: atOne, released: true}},
	{name: "v2 release at the base", rec: &outOfRange{at: atBase, released: true}},
	{name: "v2 record held by ghost one above the range", rec: &outOfRange{at: aboveRange}},
	{name: "v2 record held by the leader's NodeID at MaxInt64", rec: &outOfRange{at: atMax, leader: true}},
	{name: "v2 release at MaxInt64", rec: &outOfRange{at: atMax, released: true}},
}

// injectGarbage writes one garbage value into the lease key.
func (r *run) injectGarbage() string {
	g := garbageValues[r.rngIntN(len(garbageValues))]
	return fmt.Sprintf("garbage (%s) into lease: %s", g.name, r.writeGarbage(g))
}

// writeGarbage writes g into the lease key and says how it went.
func (r *run) writeGarbage(g garbage) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if g.rec != nil {
		holder := "ghost"
		if l := r.leader(); g.rec.leader && l != nil {
			holder = l.id
		}
		rev, data, err := writeOutOfRange(ctx, r.js, r.bucket(), *g.rec, holder)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("ok, revision %d: %s", rev, data)
	}
	kv, err := r.js.KeyValue(ctx, r.bucket())
	if err == nil {
		switch g.op {
		case "delete":
			err = kv.Delete(ctx, wire.LeaseKey)
		case "purge":
			err = kv.Purge(ctx, wire.LeaseKey)
		default:
			_, err = kv.Put(ctx, wire.LeaseKey, g.data)
		}
	}
	return errString(err)
}

// writeOutOfRange writes a record of this protocol whose epoch is outside
// the range of the revision it lands at, and returns that revision and the
// record. Epochs at the edges of the range need the revision ahead of
// time: the record is published with Nats-Expected-Last-Sequence, so it
// lands right after the stream's last sequence or not at all (C3), and is
// tried again when another write came first.
func writeOutOfRange(ctx context.Context, js jetstream.JetStream, bucket string, o outOfRange, holder string) (uint64, []byte, error) {
	for attempt := 1; ; attempt++ {
		base, firstSeq, lastSeq, err := incarnationOf(ctx, js, bucket)
		if err != nil {
			return 0, nil, err
		}
		var epoch int64
		switch o.at {
		case atOne:
			epoch = 1
		case atBase:
			epoch = base
		case aboveRange:
			epoch = base + int64(bucketmeta.Index(firstSeq, lastSeq+1)) + 1 // it lands at lastSeq+1
		case atMax:
			epoch = math.MaxInt64
		}
		data, err := json.Marshal(outOfRangeRecord(o, holder, epoch))
		if err != nil {
			return 0, nil, err
		}
		ack, err := js.Publish(ctx, "$KV."+bucket+"."+wire.LeaseKey, data, jetstream.WithExpectLastSequence(lastSeq))
		if err == nil {
			return ack.Sequence, data, nil
		}
		if !lostRace(err) || attempt == 10 {
			return 0, data, fmt.Errorf("publish at last sequence %d (attempt %d): %w", lastSeq, attempt, err)
		}
	}
}

// outOfRangeRecord is a well-formed record of this protocol at epoch; a
// held one promises the longest TTL a record may carry, which a node that
// waited it (instead of the ceiling) would wait for a day.
func outOfRangeRecord(o outOfRange, holder string, epoch int64) cluster.Lease {
	now := time.Now()
	l := cluster.Lease{Version: wire.Protocol, Epoch: epoch, AcquiredAt: now, ExpiresAt: now}
	if !o.released {
		l.NodeID, l.TTLMillis, l.ExpiresAt = holder, wire.MaxLeaseTTL.Milliseconds(), now.Add(wire.MaxLeaseTTL)
	}
	return l
}

// incarnationOf reads the base of the bucket's incarnation (docs/design.md
// §2.1), its stream's first_seq and its last sequence.
func incarnationOf(ctx context.Context, js jetstream.JetStream, bucket string) (base int64, firstSeq, lastSeq uint64, err error) {
	s, err := js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("stream info: %w", err)
	}
	info := s.CachedInfo()
	meta, err := bucketmeta.Parse(info.Config.Metadata)
	if err != nil {
		return 0, 0, 0, err
	}
	return bucketmeta.Base(info.Config.FirstSeq, meta.EpochBase), info.Config.FirstSeq, info.State.LastSeq, nil
}

// lostRace reports a publish refused because the stream's last sequence
// moved on (10071), or a write to the subject was in flight (10164).
func lostRace(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == 10164)
}
