package wire

// ProtocolHi is the highest version of the election protocol this build
// speaks (docs/design.md §5.9, P16): a cluster moves to a version once
// every member speaks it. Tests run nodes that speak the next version too
// beside this build's (cluster.Config's test-only protocolHi).
const ProtocolHi = Protocol

// BucketProtocol is the go-cluster.protocol mark of the election buckets
// this build creates: 4, a cluster that keeps its TTL ceiling and member
// records in the account's bucket (AccountBucketName). A bucket marked 3
// keeps them in members-<ClusterID> (MembersBucketName); this build uses
// both, and init --upgrade moves a bucket from 3 to 4. A build of protocol
// 3 alone refuses a bucket marked 4, where it would read a ceiling that is
// no longer kept (docs/design.md §2.7, §5.9). The mark names where the
// ceiling lives, not the records' version: the lease record's v stays
// Protocol.
const BucketProtocol = 4

// BucketProtocolHi is the highest bucket mark a node speaking protocol
// versions up to hi uses.
func BucketProtocolHi(hi int) int { return max(hi, BucketProtocol) }
