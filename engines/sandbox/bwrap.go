package sandbox

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/ensemblework/ensemble/engines"
)

// kind is what is at a path on this computer.
type kind uint8

const (
	missing kind = iota
	file
	dir
)

// statKind says what is at p, following links.
func statKind(p string) kind {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return missing
	case fi.IsDir():
		return dir
	}
	return file
}

// realPath is p with its links followed, or p when it does not exist.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// bwrapArgs is bubblewrap's command line (without the program) that runs argv in folder under
// sb: the whole system read-only, its own /dev, /proc and /tmp, its own user and process
// namespaces (no other process's memory or environment to read, and all of it ends with the
// agent), every rule
// a mount in the order [rules] gives, then the hidden folders made read-only. stat and real see
// the computer's files (os.Stat and filepath.EvalSymlinks outside tests).
func bwrapArgs(sb engines.Sandbox, extra Extra, folder string, argv []string, stat func(string) kind, real func(string) string) []string {
	a := []string{
		// A user namespace of its own even for root: its capabilities reach nothing outside, the
		// mounts made here cannot be undone from inside, and an agent's own sandbox can nest.
		"--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
	}
	if extra.Terminal {
		a = slices.DeleteFunc(a, func(s string) bool { return s == "--new-session" })
	}
	var hidden []string
	for _, r := range rules(sb, extra) {
		p := real(r.path)
		k := stat(p)
		if k == missing {
			continue // nothing there to open or to hide; a later rule's folder does not exist yet either
		}
		// A later mount at the same path replaces the hidden folder there.
		hidden = slices.DeleteFunc(hidden, func(h string) bool { return h == p })
		switch r.acc {
		case write:
			a = append(a, "--bind", p, p)
		case allowRead, denyWrite:
			a = append(a, "--ro-bind", p, p)
		case scratch:
			a = append(a, "--bind", r.from, p)
		case denyRead:
			if k == dir {
				a = append(a, "--tmpfs", p)
				hidden = append(hidden, p)
			} else {
				a = append(a, "--ro-bind", "/dev/null", p)
			}
		}
	}
	// Hidden folders are empty and stay so: made read-only once every mount inside them is made.
	for _, p := range hidden {
		a = append(a, "--remount-ro", p)
	}
	a = append(a, "--chdir", folder, "--")
	return append(a, argv...)
}
