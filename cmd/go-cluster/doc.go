// Command go-cluster is the operator's tool for go-cluster clusters: it
// shows who leads and since when, streams leadership changes, asks the
// leader to step down, queries the nodes' health, reads the cluster's
// fenced state, and creates its bucket ahead of time (or changes the
// election's settings kept with it).
//
// Install it with
//
//	go install github.com/ozanturksever/go-cluster/cmd/go-cluster@latest
//
// Usage:
//
//	go-cluster [flags] status [--settle D] leader, epoch, its metadata, lease, and every member with role and health
//	go-cluster [flags] watch [--all] [--count N]
//	                                       stream leadership changes from the lease
//	go-cluster [flags] stepdown [--to NODE] [--force] [--wait=false]
//	                                       ask the leader to step down, optionally in favour of NODE
//	go-cluster [flags] health [--settle D] [NODE]
//	                                       health of one node, or of every node
//	go-cluster [flags] init [--replicas N] [--storage file|memory] [--placement-cluster C] [--placement-tags a,b]
//	                        [--lease-ttl D] [--rebase] [--upgrade [--wait]]
//	                                       create the cluster's bucket ahead of time; change its
//	                                       LeaseTTL, its epoch base after a restore, its protocol
//	go-cluster [flags] state get KEY       the value of a state key
//	go-cluster [flags] state ls [PREFIX]   the state keys, sorted
//	go-cluster [flags] state watch [--count N] [PREFIX]
//	                                       the current state values, then every change
//	go-cluster version                     the version, and the commit it was built from (also --version)
//	go-cluster [flags] run [--node ID] [--ttl D] [--grace D] [--once] [--start-timeout D] [--slots N] -- COMMAND [ARGS...]
//	                                       campaign, and run COMMAND while this host leads
//	go-cluster agent [--config FILE] [--check [--other-host] | --cleanup]
//	                                       the agent daemon: VIPs, checks, notify commands, a service
//	go-cluster [flags] maintenance on|off --node NODE
//	                                       an agent's node out of (or back into) elections
//
// run and agent are described in docs/agent.md.
//
// Each command has its own help: go-cluster help COMMAND, or COMMAND
// --help (-h): its usage, what it does, its flags, an example and its exit
// status. go-cluster help --man prints the man page, go-cluster(1), made
// from the same text; the .deb ships it.
//
// Flags (before or after the command; long ones take two dashes, as with
// the nats CLI). The connection flags are those of the nats CLI:
//
//	-s, --server URLS   NATS server URLs, comma-separated
//	--context NAME      a context saved by the nats CLI (nats context save)
//	--user NAME         user, with --password PASSWORD
//	--creds FILE        NATS credentials (.creds) file
//	--nkey FILE         NKey seed file
//	--tlscert FILE      TLS client certificate, with --tlskey FILE
//	--tlsca FILE        CA certificates to trust
//	--js-domain DOMAIN  JetStream domain of the bucket, through a leaf node
//	--cluster ID        the cluster's ID (required)
//	--timeout D         how long to wait for NATS and for replies (default 2s); run refuses it: its wait is --start-timeout
//	--json              print JSON instead of text
//
// Each connection setting comes from the first of: the flags; the
// environment (NATS_URL, NATS_USER, NATS_PASSWORD, NATS_CREDS, NATS_NKEY,
// NATS_CERT, NATS_KEY, NATS_CA, GO_CLUSTER_JS_DOMAIN); the nats CLI context named by --context,
// else by NATS_CONTEXT, else selected with `nats context select` (read from
// $XDG_CONFIG_HOME/nats, else ~/.config/nats). The server defaults to
// nats://127.0.0.1:4222. The credentials come as a whole from one of them,
// so a --creds flag replaces a context's user and password.
//
// status lists every member: each node announces itself at Start in the
// account's bucket, go-cluster (wire.AccountBucketName,
// wire.AccountMemberKey; a cluster of protocol 3 in its members bucket,
// members-<ID>; not the election's bucket), withdraws at Stop, and
// answers the built-in status request (wire.StatusSubject) with no
// wiring by the application. Its ROLE is what it answers: "leader", "follower",
// "observer" or "not ready"; "down" for a member announced and not
// withdrawn that did not answer within --timeout (it crashed, was cut off,
// or stopped on an error; status then waits the whole --timeout). A member
// that stopped is not listed. A node of a version without status replies
// shows the role of its health reply in the same words: "leader" for
// PRIMARY, "follower" for PASSIVE. The health command's ROLE column says
// the same; in --json both keep the health reply's role field as it comes,
// "PRIMARY" or "PASSIVE" (the specification's words, cluster.Role's
// strings), for scripts that read it.
//
// status shows the leader's metadata (its Config.Metadata, which the lease
// record carries) and, where the application wires a health checker, each
// member's health ("-" without one): "ok"; "not ready" when the node's
// ReadinessCheck has not passed yet or has failed ReadinessThreshold times
// in a row (it does not campaign then, and a leader steps down), with the
// reason the node gives; "error" when it answered with an error; "no
// answer" for a down member or a holder of the lease that did not answer.
// health shows the same readiness in its READY column. stepdown --to NODE
// first sends NODE a status request (its health query for a node of a
// version without one) and sends nothing when NODE does not answer, is an
// observer, or answers that it is not ready; --force sends all the same (a node that is not
// ready does not take the lease, so another node leads and stepdown
// exits 1).
//
// NODE is a NodeID as the nodes are configured, host names included
// ("stepdown --to db1.example.com", "health db1.example.com"); the
// commands put it into subjects as wire.NodeIDToken does. A NODE that
// is not a valid NodeID (wire.CheckNodeID) is a usage error.
//
// status and health without NODE ask every member at once. They stop once
// every member they know of (for status the announced members; the
// lease's holder, and the leaders the replies name) has answered and
// no other reply has come for --settle (300ms), or at --timeout. watch
// prints a line when the leader, the epoch or the state of the lease
// changes (with --all, every renewal too); the bucket keeps one record, so
// a record overwritten before the watch receives it is not shown: a
// release followed at once by a takeover can appear as the takeover alone
// ("node-3 leads, epoch 2 (was node-1)"). When stderr is a terminal, the
// commands that wait show a spinner there; in a pipe they write only
// their output and errors.
//
// The state commands read the keys the leader writes with
// cluster.Node.State, through the library's own read path: an observer
// node that the command starts on its connection (it never campaigns and
// writes nothing; the bucket must exist). state get prints the value as
// stored (a terminal also gets a newline); with --json an object with key,
// value (or value_base64 when it is not UTF-8), revision, epoch (the
// writer's) and created. state ls prints the keys that are PREFIX or below
// it ("orders" lists "orders" and "orders.42", not "orders2"), or every
// key; when there is none it says so on stderr, and prints nothing. state
// watch prints the current values, then each write and deletion as it is
// stored, one line each ("put" or "deleted"; with --json one object per
// line, without epoch). Keys and prefixes follow the rules of
// state.State's keys.
//
// init creates the cluster's bucket ahead of time with the settings a node
// would create it with (store.Create) and --replicas, --storage
// (file or memory), --placement-cluster and --placement-tags, and keeps
// the cluster's TTL ceiling in the account's bucket, created with the
// same options if absent (store.EnsureAccount, store.RaiseCeiling; a
// failure there is only a warning, since nodes set it, or run without
// it). --upgrade also moves a cluster of protocol 3, whose ceiling is in
// its members bucket, there. An existing
// bucket is accepted ("exists and is usable", with a note for each given
// flag it differs from); one the election cannot use is an error. A node
// waits LeaseTTL less the age of a bucket in which nothing was ever
// written, so a bucket created more than LeaseTTL before the first node
// starts makes the first election immediate.
//
// Behind a leaf node, --js-domain (or GO_CLUSTER_JS_DOMAIN, or a
// context's JetStream domain or API prefix) names the JetStream domain of
// the cluster's bucket, the hub's: every command reads and writes there,
// and the state commands' observer is given it as
// cluster.Config.JetStreamDomain.
//
// Exit status: 0 on success; 1 when NATS cannot be reached, the cluster
// does not exist, nobody answers, a request is refused or a context cannot
// be read; 2 on bad flags or arguments; 3 from status when the cluster
// exists but nobody leads (the lease is released, deleted, invalid, or was
// never won), after printing the status; 4 from stepdown --to when that
// node reports it is not ready (nothing was sent); 5 from state get when
// the key has no value (never written, or deleted).
//
// It reads the lease from the cluster's KV bucket "cluster-<ID>" (through
// JetStream), asks the nodes' health checkers on "cluster.<ID>.health", and
// sends step-down requests to "cluster.<ID>.control.stepdown", where the
// leader answers. Who may do each is a matter of NATS permissions.
package main
