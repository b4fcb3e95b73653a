package vip

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// runner runs a function that talks to the kernel (netlink, raw sockets)
// in the manager's network namespace. Sockets created by the function stay
// in that namespace and can be used afterwards from any goroutine.
type runner func(fn func() error) error

// newRunner returns a runner for the namespace at path; "" runs functions
// directly on the calling goroutine, in the caller's namespace.
func newRunner(path string) runner {
	if path == "" {
		return func(fn func() error) error { return fn() }
	}
	return func(fn func() error) error {
		return onNewThread(func() error {
			if err := enterNetNS(path); err != nil {
				return err
			}
			return fn()
		})
	}
}

// onNewThread runs fn on a goroutine locked to its own OS thread and waits
// for it. The thread is never unlocked: whatever fn changes about it (its
// network namespace, its capabilities) dies with it, because the Go runtime
// ends a thread whose goroutine exits while locked.
func onNewThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		errc <- fn()
	}()
	return <-errc
}

// enterNetNS moves the calling (locked) thread into the namespace at path.
func enterNetNS(path string) error {
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrNetNS, path, err)
	}
	defer ns.Close()
	if err := netns.Set(ns); err != nil {
		return fmt.Errorf("%w %s: %w", ErrNetNS, path, err)
	}
	return nil
}
