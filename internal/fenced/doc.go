// Package fenced is the plumbing of package cluster's fenced state: keys
// under "state." in the cluster's bucket that only the leader writes,
// with the NATS server itself refusing a write once the lease has moved
// (docs/design.md §10).
//
// Every write carries the tenure's epoch (EpochHeader) and the expected
// last sequence of the lease subject; a Commit is a JetStream atomic
// batch fenced the same way. A refusal is judged before it is believed
// (refusal.go): only a server that has stored a later lease record proves
// that nothing of a write landed. Reads go to the bucket stream's leader
// (read.go); Keys and Watch follow the stream with a consumer.
//
// Package cluster's State is the face: it validates, wraps the errors
// with the operation and calls State here. This package does not import
// package cluster; the errors package cluster re-exports are defined
// here, so errors.Is holds across both.
package fenced
