package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/ozanturksever/go-cluster/state"
)

// stateGetCmd prints the value of one state key.
type stateGetCmd struct{}

func (c *stateGetCmd) define(*pflag.FlagSet) {}

func (c *stateGetCmd) run(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: a KEY is required (usage: go-cluster state get KEY)", errUsage)
	}
	key := args[0]
	if err := checkStateKey(key); err != nil {
		return err
	}
	r, err := e.openState(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	gctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	ent, err := r.state().Get(gctx, key)
	switch {
	case errors.Is(err, state.ErrKeyNotFound):
		return fmt.Errorf("%w: %q has no value in cluster %s (never written, or deleted)", errNoKey, key, e.opts.cluster)
	case err != nil:
		return r.explain("read "+key, err)
	}
	if e.opts.json {
		return writeJSON(e.stdout, viewEntry(ent, ""))
	}
	// The value as it is, for pipes and files; a terminal also gets the
	// end of the line.
	out := ent.Value
	if isTerminal(e.stdout) && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out[:len(out):len(out)], '\n')
	}
	_, err = e.stdout.Write(out)
	return err
}

// stateLsCmd lists the state keys.
type stateLsCmd struct{}

func (c *stateLsCmd) define(*pflag.FlagSet) {}

func (c *stateLsCmd) run(ctx context.Context, e *env, args []string) error {
	prefix, err := statePrefix(args)
	if err != nil {
		return err
	}
	r, err := e.openState(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	lctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	keys, err := r.state().Keys(lctx, prefix)
	if err != nil {
		return r.explain("list the keys", err)
	}
	if e.opts.json {
		if keys == nil {
			keys = []string{} // [], not null
		}
		return writeJSON(e.stdout, keys)
	}
	if len(keys) == 0 {
		// Said on stderr: the output, a list of keys, stays empty for
		// pipes and scripts.
		_, err := fmt.Fprintln(e.stderr, noKeys(prefix, e.opts.cluster))
		return err
	}
	for _, k := range keys {
		if _, err := fmt.Fprintln(e.stdout, k); err != nil {
			return err
		}
	}
	return nil
}

// noKeys says that state ls found no key.
func noKeys(prefix, clusterID string) string {
	if prefix == "" {
		return "no state keys in cluster " + clusterID
	}
	return fmt.Sprintf("no state key %s or below it in cluster %s", prefix, clusterID)
}

// stateWatchCmd prints the current state values, then every change.
type stateWatchCmd struct {
	count int
}

func (c *stateWatchCmd) define(fs *pflag.FlagSet) {
	fs.IntVar(&c.count, "count", 0, "stop after printing `N` events, the current values included (0: until interrupted)")
}

func (c *stateWatchCmd) run(ctx context.Context, e *env, args []string) error {
	if c.count < 0 {
		return fmt.Errorf("%w: --count must not be negative", errUsage)
	}
	prefix, err := statePrefix(args)
	if err != nil {
		return err
	}
	r, err := e.openState(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	// The watch first delivers the latest record of each key, and that of
	// a key deleted earlier is its deletion marker: no current value, so
	// markers written before the watch began are not shown.
	since, err := r.lastRevision(ctx)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	w, err := r.state().Watch(wctx, prefix)
	if err != nil {
		cancel()
		return r.explain("watch", err)
	}
	defer func() {
		cancel()
		for range w.Updates() { // closed once the watch has stopped
		}
	}()
	if e.interactive {
		what := "every state key"
		if prefix != "" {
			what = "the state keys " + prefix + " and " + prefix + ".*"
		}
		fmt.Fprintf(e.stderr, "watching %s of cluster %s; Ctrl-C to stop\n", what, e.opts.cluster)
	}
	for printed := 0; c.count == 0 || printed < c.count; {
		select {
		case <-ctx.Done():
			return nil // interrupted: a normal end
		case <-r.node.Done():
			return fmt.Errorf("watch ended: %w", r.node.Err())
		case ent, ok := <-w.Updates():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return errors.New("watch ended")
			}
			if ent.Deleted && ent.Revision <= since {
				continue
			}
			event := stateEventPut
			if ent.Deleted {
				event = stateEventDeleted
			}
			ev := viewEntry(ent, event)
			if e.opts.json {
				err = writeJSONLine(e.stdout, ev)
			} else {
				err = renderStateEvent(e.stdout, ev)
			}
			if err != nil {
				return err
			}
			printed++
		}
	}
	return nil
}

// statePrefix is the optional PREFIX argument of ls and watch, checked.
func statePrefix(args []string) (string, error) {
	if len(args) == 0 {
		return "", nil
	}
	if err := checkStateKey(args[0]); err != nil {
		return "", err
	}
	return args[0], nil
}
