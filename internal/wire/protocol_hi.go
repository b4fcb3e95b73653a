package wire

// ProtocolHi is the highest version of the election protocol this build
// speaks (docs/design.md §5.9, P16): a cluster moves to a version once
// every member speaks it. Tests run nodes that speak the next version too
// beside this build's (cluster.Config's test-only protocolHi).
const ProtocolHi = Protocol
