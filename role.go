package cluster

// Role is what a node currently is in its cluster, in the words of the
// specification this package implements: RolePrimary is the leader,
// RolePassive a follower or an observer. The rest of the library (hooks,
// events, logs, metrics, the CLI) says leader, follower and observer; Role
// and its String values "PRIMARY" and "PASSIVE" are kept as the
// specification has them, and the health package's wire format carries
// them.
//
// Role does not tell a follower from an observer: both are RolePassive. A
// Node made by NewObserver is always an observer (it never campaigns); the
// built-in status reply (StatusReply.Role: StatusFollower, StatusObserver)
// tells them apart for other processes.
type Role int

const (
	// RolePassive is a node that does not lead: a follower (it campaigns
	// when the lease is released or expires) or an observer (it never
	// campaigns).
	RolePassive Role = iota
	// RolePrimary is the leader: the node that holds the lease.
	RolePrimary
)

// String returns "PASSIVE", "PRIMARY", or "UNKNOWN": the specification's
// words for a follower or observer, and for the leader.
func (r Role) String() string {
	switch r {
	case RolePassive:
		return "PASSIVE"
	case RolePrimary:
		return "PRIMARY"
	default:
		return "UNKNOWN"
	}
}

// IsPrimary reports whether r is RolePrimary: the leader.
func (r Role) IsPrimary() bool { return r == RolePrimary }

// IsPassive reports whether r is RolePassive: a follower or an observer.
func (r Role) IsPassive() bool { return r == RolePassive }
