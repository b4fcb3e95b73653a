// Package securetest builds secured NATS servers for tests: a private CA
// with server and client certificates (crypto/x509, written under the
// test's temporary directory), an operator with accounts and users in JWT
// mode with an in-memory account resolver (.creds files), NKey users, and
// an embedded JetStream server on 127.0.0.1 configured with any of them.
//
// It also states the minimal NATS permissions a go-cluster node needs
// (NodePermissions), which the root package's secure tests prove enough
// and, entry by entry, necessary.
package securetest
