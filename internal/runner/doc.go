// Package runner runs a command on the leader of a go-cluster cluster, and
// only there: the engine of `go-cluster run` and of the agent's supervised
// service.
//
// A Runner campaigns as a cluster.Node. While it leads it runs the command
// in a process group of its own, with GO_CLUSTER_CLUSTER, GO_CLUSTER_NODE
// and GO_CLUSTER_EPOCH (the tenure's fencing epoch) in its environment.
// It starts the command only with more than Grace + KillLead left before
// the tenure's deadline: a tenure seen late (its campaign answered slowly)
// waits for a renewal to move the deadline away, and one that ends first
// never runs it. The command is gone before any other node can lead:
//
//   - when renewals stop landing and less than Grace + KillLead is left
//     before the tenure's deadline (cluster.Node.Tenure), the
//     process group gets SIGTERM, and SIGKILL KillLead before the deadline;
//   - when the tenure ends early (StepDown, a preferred leader, Stop), the
//     group gets SIGTERM, then SIGKILL after Grace, and OnLoseLeadership
//     (which the lease's release waits for) returns only once the command
//     has exited;
//   - when the runner's process dies, the kernel kills the command
//     (Pdeathsig), and the lease runs out after LeaseTTL.
//
// Signals given to Run are passed on to the command's process group. When
// the command exits while leading, what it left running in its group gets
// SIGTERM, then SIGKILL after Grace; once none of it is left the Runner
// stops its Node, which releases the lease so that a runner waiting
// elsewhere takes over at once, and Run returns the command's exit status.
//
// With Config.Slots N, the Runner campaigns in N elections (slots) and
// runs the command in the first it wins, staying out of the others while
// it runs: at most N commands of the cluster run at once.
package runner
