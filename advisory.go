package cluster

// Bucket advisories: the server announces a stream's creation on
// $JS.EVENT.ADVISORY.STREAM.CREATED.<stream>. A node's lease watch shows
// nothing when its bucket is deleted (the consumer goes with the stream),
// so without them a follower learns of a bucket created again only when it
// reads the key back; with them it follows the new bucket and writes its
// epoch floor there at once, before a node started on the new bucket with
// a shorter LeaseTTL may lead in it (rule 25 in docs/design.md).

import (
	"github.com/nats-io/nats.go"
)

// bucketAdvisorySubject is where the server announces that bucket's stream
// was created. Only creation: a deletion alone is ErrBucketDeleted, which
// a node finds out when it next needs the bucket, and an operator who
// deletes a bucket and creates it again a moment later should not stop
// every node.
func bucketAdvisorySubject(bucket string) string {
	return "$JS.EVENT.ADVISORY.STREAM.CREATED." + kvStream(bucket)
}

// subscribeBucketAdvisories tells out (without blocking: one pending signal
// is enough) when the bucket's stream is created. It is
// best effort: a subscription the server refuses for want of permission is
// reported asynchronously and changes nothing else (see explainPermission).
func subscribeBucketAdvisories(nc *nats.Conn, bucket string, out chan<- struct{}) (*nats.Subscription, error) {
	return nc.Subscribe(bucketAdvisorySubject(bucket), func(*nats.Msg) {
		select {
		case out <- struct{}{}:
		default:
		}
	})
}
