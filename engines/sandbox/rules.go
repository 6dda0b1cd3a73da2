package sandbox

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/engines"
)

// access is what a rule lets the sandboxed process do at a path and below it.
type access uint8

// In the order a rule for the same path is applied: the later one wins.
const (
	allowRead access = iota // read, inside a hidden path (never narrows a writable one)
	write                   // read and change
	denyWrite               // read only, inside a writable path
	denyRead                // hidden
	scratch                 // shown as another folder (a copy made for the run), changes kept there
)

// rule is one path of the policy.
type rule struct {
	path string
	acc  access
	from string // scratch: the folder shown at path
}

// rules are sb's paths, cleaned and made absolute, plus the agent's extra folders, in the order they are applied: shorter paths first, so the rule for the longest path
// that holds a file is the one that decides it. Relative paths and duplicates are dropped.
func rules(sb engines.Sandbox, extra Extra) []rule {
	var rs []rule
	add := func(paths []string, a access) {
		for _, p := range paths {
			if p == "" || !filepath.IsAbs(p) {
				continue
			}
			r := rule{path: filepath.Clean(p), acc: a}
			if !slices.Contains(rs, r) {
				rs = append(rs, r)
			}
		}
	}
	add(sb.Write, write)
	add(extra.Write, write)
	add(sb.AllowRead, allowRead)
	add(sb.DenyWrite, denyWrite)
	add(sb.DenyRead, denyRead)
	for p, from := range extra.Scratch {
		if filepath.IsAbs(p) && filepath.IsAbs(from) {
			rs = append(rs, rule{path: filepath.Clean(p), acc: scratch, from: filepath.Clean(from)})
		}
	}
	slices.SortStableFunc(rs, func(a, b rule) int {
		if d := depth(a.path) - depth(b.path); d != 0 {
			return d
		}
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return int(a.acc) - int(b.acc)
	})
	return rs
}

// depth is how many names an absolute, clean path has ("/" has none).
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}
