package securetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Member is how one node of a Scenario reaches NATS.
type Member struct {
	ID      string        // NodeID
	Creds   string        // .creds file, or ""
	Options []nats.Option // TLS, NKey, user/password, inbox prefix...
}

// Scenario runs two nodes of one cluster, each with a health checker, on
// a secured server, and exercises everything a node does: create or bind
// the bucket, announce itself in the account's bucket, elect, prove tenure, answer health queries, StepDown (with its
// cooldown record), hand over on a remote step-down request, release on
// Stop. An Admin connection, allowed everything, asks the questions.
type Scenario struct {
	ClusterID string        // the cluster the two nodes form
	URL       string        // the server's client URL
	Admin     []nats.Option // options of a client allowed everything
	Members   [2]Member     // Members[0] starts first: it creates the bucket if there is none
	// Dial makes each node and checker dial its own connection from its
	// Config (NATSURLs, NATSCredentials, NATSOptions). Otherwise the scenario
	// dials one connection per member, shared by its node and checker, and
	// also fails on any asynchronous error the server sends it (a
	// permission violation the node would only log).
	Dial bool
	// LeaseTTL is the nodes' (default 2s); they renew every quarter of it
	// and give each request half of it. The root package's tests run side
	// by side: at 1s (requests of 250ms) a loaded machine made a node's
	// member record time out, unwritten (its announcement is best effort).
	LeaseTTL time.Duration
	// StartTimeout bounds each node's Start (a request the server refuses
	// only times out). Default 3s.
	StartTimeout time.Duration
	// Unannounced says the members may not announce themselves (a
	// permission of the account's bucket withheld): the scenario then
	// checks that their member records are absent, not present.
	Unannounced bool
	// Refusals, when set, receives every asynchronous error the server
	// sent the members' shared connections (not with Dial): a test that
	// wants the scenario to fail for a refusal, not for want of time,
	// reads it after Run.
	Refusals *Refusals
}

// Refusals are the asynchronous errors (permission violations among them)
// the server sent a Scenario's members.
type Refusals struct{ errList }

// Violations returns the permission violations received.
func (r *Refusals) Violations() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []error
	for _, err := range r.errs {
		if errors.Is(err, nats.ErrPermissionViolation) {
			out = append(out, err)
		}
	}
	return out
}

// running is one member's node and checker.
type running struct {
	node    *cluster.Node
	checker *health.Checker
	nc      *nats.Conn // the shared connection, when not Dial
}

// Run runs the scenario and returns the first thing that did not work, or
// nil. Everything it started is stopped before it returns.
func (s Scenario) Run(t testing.TB) (err error) {
	t.Helper()
	if s.LeaseTTL == 0 {
		s.LeaseTTL = 2 * time.Second
	}
	if s.StartTimeout == 0 {
		s.StartTimeout = 3 * time.Second
	}
	admin, err := s.connect(s.Admin, "", nil)
	if err != nil {
		return fmt.Errorf("admin connect: %w", err)
	}
	defer admin.Close()
	client, err := health.NewClient(admin, s.ClusterID)
	if err != nil {
		return err
	}
	asyncErrs := &errList{}
	if s.Refusals != nil {
		asyncErrs = &s.Refusals.errList
	}
	var members []*running
	defer func() {
		for _, m := range members {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if serr := m.node.Stop(ctx); serr != nil && err == nil {
				err = fmt.Errorf("stop %s: %w", m.node.Config().NodeID, serr)
			}
			cancel()
			if nerr := m.node.Err(); nerr != nil && err == nil {
				err = fmt.Errorf("node %s stopped on its own: %w", m.node.Config().NodeID, nerr)
			}
			m.checker.Stop()
			if m.nc != nil {
				m.nc.Close()
			}
		}
		if e := asyncErrs.first(); e != nil && err == nil {
			err = fmt.Errorf("the server refused something: %w", e)
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := s.start(s.Members[0], asyncErrs)
	if err != nil {
		return err
	}
	members = append(members, a)
	if err := waitUntil(5*time.Second, a.node.IsLeader); err != nil {
		return fmt.Errorf("%s never led: %w (Err: %v)", a.node.Config().NodeID, err, a.node.Err())
	}
	// The checker learns the role from the hooks, a moment after IsLeader.
	var r health.Response
	if err := waitUntil(5*time.Second, func() bool {
		r, err = client.QueryNode(ctx, a.node.Config().NodeID, time.Second)
		return err == nil && r.IsLeader()
	}); err != nil {
		return fmt.Errorf("health query of the leader %s: %+v, %v", a.node.Config().NodeID, r, err)
	}
	b, err := s.start(s.Members[1], asyncErrs)
	if err != nil {
		return err
	}
	members = append(members, b)
	if err := waitUntil(5*time.Second, func() bool { return b.node.Leader() == a.node.Config().NodeID }); err != nil {
		return fmt.Errorf("%s never saw %s lead: %w", b.node.Config().NodeID, a.node.Config().NodeID, err)
	}
	if err := s.checkMembers(ctx, admin); err != nil {
		return err
	}
	epoch, err := a.node.ValidateLeadership(ctx)
	if err != nil {
		return fmt.Errorf("ValidateLeadership on %s: %w", a.node.Config().NodeID, err)
	}
	cooldown, err := s.watchCooldown(ctx, admin, a.node.Config().NodeID)
	if err != nil {
		return err
	}
	defer func() { _ = cooldown.Stop() }()
	if err := a.node.StepDown(ctx); err != nil {
		return fmt.Errorf("StepDown: %w", err)
	}
	if err := waitUntil(5*time.Second, b.node.IsLeader); err != nil {
		return fmt.Errorf("%s did not take over after StepDown: %w (Err: %v)", b.node.Config().NodeID, err, b.node.Err())
	}
	if e, err := b.node.ValidateLeadership(ctx); err != nil || e <= epoch {
		return fmt.Errorf("ValidateLeadership on %s: epoch %d after %d, %v", b.node.Config().NodeID, e, epoch, err)
	}
	rs, err := client.QueryClusterN(ctx, 2, 2*time.Second)
	if err != nil || len(rs) != 2 {
		return fmt.Errorf("cluster health query: %d responses, %w", len(rs), err)
	}
	if err := checkCooldown(cooldown, a.node.Config().NodeID); err != nil {
		return err
	}
	// A remote step-down over NATS: the leader answers and hands over.
	epoch = b.node.Epoch()
	reply, err := admin.RequestWithContext(ctx, wire.ControlSubject(s.ClusterID), nil)
	if err != nil {
		return fmt.Errorf("remote step-down request: %w", err)
	}
	var sr wire.StepDownReply
	if err := json.Unmarshal(reply.Data, &sr); err != nil || !sr.OK {
		return fmt.Errorf("remote step-down reply %q: %v", reply.Data, err)
	}
	if err := waitUntil(10*time.Second, func() bool {
		return (a.node.IsLeader() && a.node.Epoch() > epoch) || (b.node.IsLeader() && b.node.Epoch() > epoch)
	}); err != nil {
		return fmt.Errorf("no new leader after the remote step-down: %w", err)
	}
	return nil
}

// start starts one member's node and checker.
func (s Scenario) start(m Member, asyncErrs *errList) (*running, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.StartTimeout)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ncfg := cluster.Config{ClusterID: s.ClusterID, NodeID: m.ID, LeaseTTL: s.LeaseTTL,
		RenewInterval: s.LeaseTTL / 4, RequestTimeout: s.LeaseTTL / 2, Logger: quiet}
	hcfg := health.Config{ClusterID: s.ClusterID, NodeID: m.ID, Logger: quiet}
	r := &running{}
	if s.Dial {
		ncfg.NATSURLs, ncfg.NATSCredentials, ncfg.NATSOptions = []string{s.URL}, m.Creds, m.Options
		hcfg.NATSURLs, hcfg.NATSCredentials, hcfg.NATSOptions = []string{s.URL}, m.Creds, m.Options
	} else {
		nc, err := s.connect(m.Options, m.Creds, asyncErrs)
		if err != nil {
			return nil, fmt.Errorf("%s connect: %w", m.ID, err)
		}
		r.nc, ncfg.Conn, hcfg.Conn = nc, nc, nc
	}
	checker, err := health.NewChecker(hcfg)
	if err != nil {
		return nil, err
	}
	adapter := health.NewAdapter(checker)
	node, err := cluster.NewNode(ncfg, adapter)
	if err != nil {
		return nil, err
	}
	if err := adapter.Bind(node); err != nil {
		return nil, err
	}
	if err := checker.Start(ctx); err != nil {
		if r.nc != nil {
			r.nc.Close()
		}
		return nil, fmt.Errorf("%s health checker: %w", m.ID, err)
	}
	if err := node.Start(ctx); err != nil {
		checker.Stop()
		if r.nc != nil {
			r.nc.Close()
		}
		return nil, fmt.Errorf("%s start: %w", m.ID, err)
	}
	r.node, r.checker = node, checker
	return r, nil
}

// watchCooldown watches the StepDown cooldown record of nodeID for what
// is written from now on. The record lives as long as the cooldown (the
// scenario's LeaseTTL, 2s by default): read after the handover, it may be
// gone already on a loaded machine, where a watch still sees it written.
func (s Scenario) watchCooldown(ctx context.Context, admin *nats.Conn, nodeID string) (jetstream.KeyWatcher, error) {
	js, err := jetstream.New(admin)
	if err != nil {
		return nil, err
	}
	kv, err := js.KeyValue(ctx, "cluster-"+s.ClusterID)
	if err != nil {
		return nil, fmt.Errorf("admin bind: %w", err)
	}
	w, err := kv.Watch(ctx, wire.CooldownKey(nodeID), jetstream.UpdatesOnly())
	if err != nil {
		return nil, fmt.Errorf("admin watch of the cooldown record: %w", err)
	}
	return w, nil
}

// checkCooldown waits for w to show the StepDown cooldown record of nodeID
// written (the node purges it before it writes it again).
func checkCooldown(w jetstream.KeyWatcher, nodeID string) error {
	timeout := time.After(3 * time.Second)
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("the watch of the StepDown cooldown record of %s ended", nodeID)
			}
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				return nil
			}
		case <-timeout:
			return fmt.Errorf("the StepDown cooldown record of %s was not written: not within 3s", nodeID)
		}
	}
}

// checkMembers reads the member records of both members: present, or
// absent when Unannounced.
func (s Scenario) checkMembers(ctx context.Context, admin *nats.Conn) error {
	js, err := jetstream.New(admin)
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, wire.AccountBucketName)
	if errors.Is(err, jetstream.ErrBucketNotFound) && s.Unannounced {
		return nil
	}
	if err != nil {
		return fmt.Errorf("admin bind the account's bucket: %w", err)
	}
	for _, m := range s.Members {
		_, err := kv.Get(ctx, wire.AccountMemberKey(s.ClusterID, m.ID))
		switch {
		case s.Unannounced && err == nil:
			return fmt.Errorf("%s announced itself without the permission", m.ID)
		case s.Unannounced && errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("the member record of %s: %w", m.ID, err)
		}
	}
	return nil
}

// connect dials the server; async errors go to errs when it is not nil.
func (s Scenario) connect(opts []nats.Option, creds string, errs *errList) (*nats.Conn, error) {
	all := append([]nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(50 * time.Millisecond)}, opts...)
	if creds != "" {
		all = append(all, nats.UserCredentials(creds))
	}
	if errs != nil {
		all = append(all, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs.add(err) }))
	}
	return nats.Connect(s.URL, all...)
}

// errList collects asynchronous errors.
type errList struct {
	mu   sync.Mutex
	errs []error
}

func (l *errList) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errList) first() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) == 0 {
		return nil
	}
	return errors.Join(l.errs...)
}

// waitUntil polls cond until it holds or timeout passes.
func waitUntil(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}
