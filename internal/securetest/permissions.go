package securetest

import (
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Permissions are a NATS user's allow lists: subjects it may publish to and
// subscribe to, and whether it may publish replies to requests it receives
// (allow_responses).
type Permissions struct {
	Publish        []string // subjects the user may publish to
	Subscribe      []string // subjects the user may subscribe to
	AllowResponses bool     // may reply to the requests it receives
	// Optional are the entries of Publish a node runs without: its member
	// record's, and what only creates. Without the first, the node elects
	// all the same and announces nothing (go-cluster status lists it only
	// while it answers).
	Optional []string
}

// IsOptional says whether subject is one of p's Optional entries.
func (p Permissions) IsOptional(subject string) bool {
	for _, s := range p.Optional {
		if s == subject {
			return true
		}
	}
	return false
}

// Server returns p as nats-server user permissions (config mode).
func (p Permissions) Server() *server.Permissions {
	sp := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: append([]string(nil), p.Publish...)},
		Subscribe: &server.SubjectPermission{Allow: append([]string(nil), p.Subscribe...)},
	}
	if p.AllowResponses {
		sp.Response = &server.ResponsePermission{MaxMsgs: 1, Expires: time.Minute}
	}
	return sp
}

// Without returns p with the publish or subscribe entry subject removed.
func (p Permissions) Without(subject string) Permissions {
	drop := func(in []string) []string {
		var out []string
		for _, s := range in {
			if s != subject {
				out = append(out, s)
			}
		}
		return out
	}
	return Permissions{Publish: drop(p.Publish), Subscribe: drop(p.Subscribe), AllowResponses: p.AllowResponses, Optional: drop(p.Optional)}
}

// NodePermissions are the minimal permissions of a go-cluster node of
// cluster clusterID named nodeID, answering health, status and step-down requests,
// with its replies on inbox (the connection's inbox prefix, "_INBOX" by
// default), in a cluster whose bucket is marked protocol 4: its ceiling and
// member records in the account's bucket (wire.AccountBucketName). With
// create, the node may also create the buckets; without, they must exist. The root package's secure tests prove the list
// enough, and every entry necessary, but the Optional ones (the account
// bucket's member record, the status subject, what only creates): without
// one of those the node still elects. The cluster's TTL ceiling must be
// readable, in the account's bucket and in a members bucket of protocol 3
// (a stream that is not there answers so): without either every Confirm
// waits its timeout (docs/design.md §2.7).
func NodePermissions(clusterID, nodeID, inbox string, create bool) Permissions {
	bucket := "cluster-" + clusterID
	stream := "KV_" + bucket
	membersStream := wire.KVStream(wire.MembersBucketName(clusterID))
	account := wire.KVStream(wire.AccountBucketName)
	member := wire.KVSubject(wire.AccountBucketName, wire.AccountMemberKey(clusterID, nodeID))
	ceiling := wire.KVSubject(wire.AccountBucketName, wire.CeilingKey(clusterID))
	p := Permissions{
		Publish: []string{
			"$JS.API.STREAM.INFO." + stream,                  // bind the bucket; confirm the incarnation (§3.5)
			"$JS.API.CONSUMER.CREATE." + stream + ".>",       // watch the lease (its consumer)
			"$JS.API.CONSUMER.MSG.NEXT." + stream + ".>",     // its pull requests
			"$JS.API.CONSUMER.DELETE." + stream + ".>",       // stop a watch
			"$JS.API.DIRECT.GET." + stream + ".>",            // read the lease record at Start: its protocol version
			"$KV." + bucket + ".lease",                       // acquire, renew, release
			"$KV." + bucket + "." + wire.CooldownKey(nodeID), // StepDown's cooldown record
			"$JS.API.STREAM.MSG.GET." + account,              // the cluster's TTL ceiling (I2), from the stream's leader
			"$JS.API.STREAM.INFO." + membersStream,           // the ceiling of a cluster of protocol 3: "not found"
			"$JS.API.STREAM.INFO." + account,                 // bind the account's bucket
			member,                                           // announce at Start, withdraw at Stop
			ceiling,                                          // at Start: the cluster's TTL ceiling, where it has none
			wire.StatusSubject(clusterID, nodeID),            // at Start: does a process with this NodeID run?
		},
		Subscribe: []string{
			inbox + ".>",
			"cluster." + clusterID + ".health",
			health.NodeSubject(clusterID, nodeID), // the NodeID as a token: '.' written '='
			"cluster." + clusterID + ".control.stepdown",
			wire.NodeControlSubject(clusterID, nodeID),
			wire.ClusterStatusSubject(clusterID), // the built-in status request
			wire.StatusSubject(clusterID, nodeID),
		},
		AllowResponses: true,
	}
	p.Optional = []string{"$JS.API.STREAM.INFO." + account, member, ceiling, wire.StatusSubject(clusterID, nodeID)}
	if create {
		p.Publish = append(p.Publish,
			"$JS.API.INFO",                   // account limits, read before creating a bucket
			"$JS.API.STREAM.CREATE."+stream,  // create the bucket
			"$JS.API.STREAM.CREATE."+account, // create the account's bucket
		)
		p.Optional = append(p.Optional, "$JS.API.STREAM.CREATE."+account)
	}
	return p
}
