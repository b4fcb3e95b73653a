package main

// Applying a mutant: its anchor must occur exactly once, so that a
// mutant whose code moved fails loudly instead of testing nothing.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// errAnchor is a mutant whose from snippet is not in its file exactly
// once: the code moved, and the mutant must be updated.
var errAnchor = errors.New("anchor")

// mutate returns the source of m.File (under root) with m applied.
func mutate(root string, m Mutant) ([]byte, error) {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.File)))
	if err != nil {
		return nil, err
	}
	switch n := strings.Count(string(src), m.From); n {
	case 1:
	case 0:
		return nil, fmt.Errorf("%w not found in %s: the code moved; update mutant %q (mutants.txt:%d)", errAnchor, m.File, m.Name, m.Line)
	default:
		return nil, fmt.Errorf("%w found %d times in %s: make it distinctive; mutant %q (mutants.txt:%d)", errAnchor, n, m.File, m.Name, m.Line)
	}
	return []byte(strings.Replace(string(src), m.From, m.To, 1)), nil
}

// writeOverlay writes the mutated file and a go build -overlay file that
// puts it in place of the original, in dir; it returns the overlay's path.
func writeOverlay(root, dir string, m Mutant, mutated []byte) (string, error) {
	file := filepath.Join(dir, filepath.Base(m.File))
	if err := os.WriteFile(file, mutated, 0o644); err != nil {
		return "", err
	}
	orig, err := filepath.Abs(filepath.Join(root, filepath.FromSlash(m.File)))
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(struct{ Replace map[string]string }{map[string]string{orig: file}})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(dir, "overlay.json")
	return overlay, os.WriteFile(overlay, data, 0o644)
}

// moduleRoot is the directory of the go.mod above dir.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
