// Command go-cluster is the operator's tool for go-cluster clusters: it
// shows who leads and since when, streams leadership changes, asks the
// leader to step down, and queries the nodes' health.
//
// Install it with
//
//	go install github.com/ozanturksever/go-cluster/cmd/go-cluster@latest
//
// Usage:
//
//	go-cluster [flags] status              leader, epoch, lease, and every member with role and health
//	go-cluster [flags] watch [--all] [--count N]
//	                                       stream leadership changes from the lease
//	go-cluster [flags] stepdown [--to NODE] [--force] [--wait=false]
//	                                       ask the leader to step down, optionally in favour of NODE
//	go-cluster [flags] health [NODE]       health of one node, or of every node
//
// Flags (before or after the command, as with the nats CLI):
//
//	-s, --server URLS   NATS server URLs, comma-separated (default $NATS_URL, else nats://127.0.0.1:4222)
//	--creds FILE        NATS credentials (.creds) file
//	--cluster ID        the cluster's ID (required)
//	--timeout D         how long to wait for NATS and for replies (default 2s)
//	--json              print JSON instead of text
//
// status and health without NODE gather the replies of every member, so they
// take the whole --timeout. watch prints a line when the leader, the epoch
// or the state of the lease changes (with --all, every renewal too); the
// bucket keeps one record, so a record overwritten before the watch
// receives it is not shown: a release followed at once by a takeover can
// appear as the takeover alone ("node-3 leads, epoch 2 (was node-1)"). The exit status is 0 on success, 1 when the
// cluster does not exist, nobody answers or a request is refused, and 2 on
// bad flags or arguments.
//
// It reads the lease from the cluster's KV bucket "cluster-<ID>" (through
// JetStream), asks the nodes' health checkers on "cluster.<ID>.health", and
// sends step-down requests to "cluster.<ID>.control.stepdown", where the
// leader answers. Who may do each is a matter of NATS permissions.
package main
