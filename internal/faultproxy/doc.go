// Package faultproxy is a fault-injecting TCP proxy on loopback, used in
// tests to cut or stall one NATS client's connection while the server and
// the other clients carry on.
//
// A [Proxy] listens on 127.0.0.1 and forwards every accepted connection to a
// target address. Its mode applies to all its connections at once:
//
//   - forwarding (the initial mode, and after [Proxy.Restore]);
//   - cut ([Proxy.Cut]): every connection is closed, new ones are closed at
//     once: the client sees errors and reconnects;
//   - blackhole ([Proxy.Blackhole]): bytes are silently dropped both ways and
//     closes are not passed on: the client sees silence, no error;
//   - stall ([Proxy.Stall]): bytes (and closes) are held back, then delivered
//     in order by Restore: a partition that heals before TCP gives up, so a
//     write sent during the stall lands late;
//   - delay ([Proxy.Delay]): bytes (and closes) from the target reach the
//     client a fixed time late, in order; the client's bytes are not
//     delayed: a request lands at once and its reply comes late.
//
// A connection that lost bytes while blackholed cannot carry a byte stream
// any more: Restore closes it, and the client reconnects at once.
package faultproxy
