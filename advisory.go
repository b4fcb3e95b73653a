package cluster

// Bucket advisories: the server announces a stream's creation on
// $JS.EVENT.ADVISORY.STREAM.CREATED.<stream>. A node's lease watch shows
// nothing when its bucket is deleted (the consumer goes with the stream),
// so without them a follower learns of a bucket created again only when it
// reads the key back; with them it follows the new bucket and writes its
// epoch floor there at once, before a node started on the new bucket with
// a shorter LeaseTTL may lead in it (rule 25 in docs/design.md).
//
// The advisory is published in the stream's account on the subject above
// whatever the domain: a leaf node connection carries it (it keeps back
// only $JS.API.>, $KV.> and $OBJ.>), so a node behind a leaf node gets the
// hub's. A leaf node with a JetStream of its own announces its own streams
// on the same subject: behind a domain, an advisory of another domain is
// ignored. An account that imports JetStream under an API prefix gets the
// advisories only if they are exported to it too; without them the node
// works as before and finds a new bucket by reading back.

import (
	"encoding/json"

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

// streamAdvisory is the part of a stream action advisory read here.
type streamAdvisory struct {
	Domain string `json:"domain"`
}

// subscribeBucketAdvisories tells out (without blocking: one pending signal
// is enough) when the bucket's stream is created, in domain when it is not
// empty. It is best effort: a subscription the server refuses for want of
// permission is reported asynchronously and changes nothing else (see
// explainPermission).
func subscribeBucketAdvisories(nc *nats.Conn, bucket, domain string, out chan<- struct{}) (*nats.Subscription, error) {
	return nc.Subscribe(bucketAdvisorySubject(bucket), func(m *nats.Msg) {
		if !advisoryOfDomain(m.Data, domain) {
			return // another domain's stream of the same name
		}
		select {
		case out <- struct{}{}:
		default:
		}
	})
}

// advisoryOfDomain reports whether the advisory data is of domain's
// stream; any advisory is when domain is empty, and one that cannot be read
// is taken (a spurious signal costs one read of the bucket's status).
func advisoryOfDomain(data []byte, domain string) bool {
	if domain == "" {
		return true
	}
	var adv streamAdvisory
	return json.Unmarshal(data, &adv) != nil || adv.Domain == domain
}
