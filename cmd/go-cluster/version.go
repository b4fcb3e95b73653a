package main

import (
	"fmt"
	"runtime/debug"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// versionText describes the running binary's build, for --version and
// the version command, and the election protocols it speaks (a rolling
// upgrade moves a cluster to the highest every member speaks:
// docs/production.md).
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "go-cluster: unknown version (built without module support)" + protocolsText()
	}
	return describeBuild(bi) + protocolsText()
}

// protocolsText names the election protocol versions this build speaks.
func protocolsText() string {
	if wire.ProtocolHi == wire.Protocol {
		return fmt.Sprintf("; election protocol %d", wire.Protocol)
	}
	return fmt.Sprintf("; election protocols %d to %d", wire.Protocol, wire.ProtocolHi)
}

// describeBuild is one line: the module's version ("(devel)" for a build
// of a source tree the go tool did not stamp with one), then, when the go
// tool recorded them, the commit, its time and whether the tree had
// uncommitted changes, and last the Go version.
func describeBuild(bi *debug.BuildInfo) string {
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var revision, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	line := "go-cluster " + version
	if revision != "" {
		line += ", commit " + revision
		if at != "" {
			line += " of " + at
		}
		if modified {
			line += " with uncommitted changes"
		}
	}
	if bi.GoVersion != "" {
		line += ", built with " + bi.GoVersion
	}
	return line
}
