// Package wire is go-cluster's wire vocabulary: what goes over NATS and
// into the election bucket, and the rules its names follow. The lease
// record and its encoding (Lease, DecodeLease, Encode, ReleasedRecord),
// the protocol version and the LeaseTTL bounds, the step-down request and
// reply (DecodeStepDown), the status reply, the member record, the
// buckets, keys and subjects (BucketName, MemberKey, StatusSubject, ...)
// and the identifier rules (CheckIdentifier, CheckNodeID), with their
// limits and sentinel errors.
//
// It imports the standard library only, so that every part of the
// project that reads or writes these (the election machine, package
// cluster, health, the CLI) shares one definition without pulling in
// NATS or the election. Package cluster re-exports the sentinels.
package wire
