// Package sim is a deterministic simulator for the election: N nodes,
// each with its own monotonic clock whose rate drifts within a bound, a
// model of the JetStream KV lease key, a network that delays, drops and
// partitions, crashes, restarts, pauses and slow hooks, all driven from
// one seed. A Checker watches the run in simulated real time: tenures
// never overlap, epochs strictly increase, a leader exists within a bound
// once faults stop, and handovers complete within a bound.
//
// The node logic is not in this package: a Factory makes it, as a Logic
// that takes Events at the node's own now and returns Effects.
// internal/election's tests bind the election machine to it. A failing
// seed replays the identical schedule; Outcome.Trace is its short trace.
package sim
