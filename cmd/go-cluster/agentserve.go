package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ozanturksever/go-cluster/internal/agent"
)

// agentStopTimeout bounds the graceful handover at SIGTERM.
const agentStopTimeout = time.Minute

// serve runs the agent until SIGTERM or SIGINT; SIGHUP reloads the file.
func (c *agentCmd) serve(ctx context.Context, e *env, cfg *agent.Config) error {
	host, _ := os.Hostname() // checked with the node IDs (checkHere)
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c.listening = cfg.Listen
	flags := e.opts.conn
	a, err := agent.New(cfg, agent.Options{
		Hostname: host, Logger: log, Output: e.stderr,
		Connect: func(cl agent.Cluster) (agent.Endpoint, error) {
			return agentConnection(flags, cl.Connection, e.getenv)
		},
	})
	if err != nil {
		return fmt.Errorf("%w: %v", errUnsupported, err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if cfg.Listen != "" {
		stopHTTP, err := serveHTTP(cfg.Listen, a, log)
		if err != nil {
			return err
		}
		defer stopHTTP()
	}
	a.Start()
	sd := startSystemd(a, cfg, log)
	log.Info("agent started", "config", c.config, "clusters", len(cfg.Clusters))
	for _, w := range agent.Warnings(c.config, cfg) {
		log.Warn("configuration: " + w.String())
	}
	for {
		select {
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				sd.reloading()
				sd.reloaded(a, c.reload(ctx, a, log))
				continue
			}
			log.Info("stopping: handing leadership over", "signal", sig)
		case <-ctx.Done():
			log.Info("stopping: handing leadership over")
		}
		sd.stopping()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), agentStopTimeout)
		a.Stop(sctx)
		cancel()
		sd.close()
		log.Info("agent stopped")
		return nil
	}
}

// serveHTTP serves the agent's /metrics and /healthz on addr until the
// returned function is called.
func serveHTTP(addr string, a *agent.Agent, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for /metrics and /healthz: %w", err)
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("HTTP server", "err", err)
		}
	}()
	log.Info("serving /metrics and /healthz", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// reload applies the file anew and returns it; a file that is not valid,
// or not applicable, is refused (nil) and the running configuration stays.
func (c *agentCmd) reload(ctx context.Context, a *agent.Agent, log *slog.Logger) *agent.Config {
	cfg, err := c.load()
	if err == nil {
		err = a.Reload(ctx, cfg)
	}
	if err == nil && cfg.Listen != c.listening {
		log.Warn("reload: a new listen address takes effect at the next start", "listen", cfg.Listen)
	}
	if err != nil {
		log.Error("reload refused; the running configuration stays", "config", c.config, "err", err)
		return nil
	}
	log.Info("reloaded", "config", c.config)
	return cfg
}

// agentConnection resolves a cluster's connection: each setting from the
// first of the command line's flags, the file, the environment and the
// nats CLI context (the flags' --context, else the file's, else the
// selected one).
func agentConnection(flags connFlags, file agent.Connection, getenv func(string) string) (agent.Endpoint, error) {
	sources := []connSource{flagSource(flags), fileSource(file), envSource(getenv)}
	name := flags.context
	if name == "" {
		name = file.Context
	}
	ref, err := agentContext(name, sources, getenv)
	if err != nil {
		return agent.Endpoint{}, err
	}
	if ref.name != "" {
		nc, err := ref.store.load(ref.contextRef)
		if err != nil {
			return agent.Endpoint{}, err
		}
		sources = append(sources, contextSource(ref.name, nc))
	}
	s, err := merge(sources, ref.name)
	if err != nil {
		return agent.Endpoint{}, err
	}
	opts, err := s.natsOptions()
	if err != nil {
		return agent.Endpoint{}, err
	}
	return agent.Endpoint{URLs: strings.Split(s.server, ","), Options: opts, Key: s.key(),
		JetStreamDomain: s.jsDomain, JetStreamAPIPrefix: s.jsAPI}, nil
}

// fileSource is an agent cluster's connection as a source.
func fileSource(c agent.Connection) connSource {
	return connSource{
		name: "the agent's file", server: strings.Join(c.Servers, ","), user: c.User, password: c.Password,
		creds: c.Creds, nkey: c.NKey, tlsCert: c.TLS.Cert, tlsKey: c.TLS.Key, tlsCA: c.TLS.CA, jsDomain: c.JSDomain,
	}
}
