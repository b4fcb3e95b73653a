// Package sim is a deterministic simulator for the election: N nodes,
// each with its own monotonic clock whose rate drifts within a bound, a
// model of the JetStream KV lease key, a network that delays, drops and
// partitions, crashes, restarts, pauses and slow hooks, all driven from
// one seed. A Checker watches the run in simulated real time: tenures
// never overlap, epochs strictly increase, a leader exists within a bound
// once faults stop, and handovers complete within a bound.
//
// Each node runs an election.Machine: the simulator hands it election's
// own events at the node's own now and carries out its actions (Write,
// Confirm, Watch) as the driver does; Options.Knobs remove the machine's
// invariants for the negative controls (machine_test.go). Faults include
// out-of-band purges (raw, by subject: no marker), compaction, garbage,
// buckets deleted and created again, and the bucket's LeaseTTL changed on
// a live cluster. No limit is excused: an overlap or an epoch that does
// not grow always fails the seed. A failing seed replays the identical
// schedule; Outcome.Trace is its short trace.
package sim
