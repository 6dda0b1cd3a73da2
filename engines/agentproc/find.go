// Package agentproc starts agent CLIs as every driver must: from the trusted PATH, with an
// environment cleaned of what must not reach them, in a process group of their own that dies with
// the runtime and ends whole.
package agentproc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// TrustedPath is the search path agent CLIs are looked up on: the PATH of
// the person's login shell, then this process's PATH, then the usual install
// folders under home. Relative entries and entries inside folder (the work
// folder, which a repository controls) are left out.
func TrustedPath(home, folder string) []string {
	var dirs []string
	dirs = append(dirs, filepath.SplitList(loginShellPath())...)
	dirs = append(dirs, filepath.SplitList(os.Getenv("PATH"))...)
	dirs = append(dirs, installDirs(home)...)
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if seen[d] || (folder != "" && within(d, folder)) {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return out
}

// installDirs are where the agents' installers and npm put their programs.
func installDirs(home string) []string {
	var dirs []string
	if home != "" {
		dirs = append(dirs,
			filepath.Join(home, ".local", "bin"),
			filepath.Join(home, ".claude", "local"),
			filepath.Join(home, ".npm-global", "bin"),
			filepath.Join(home, ".bun", "bin"),
			filepath.Join(home, ".volta", "bin"),
			filepath.Join(home, "bin"),
		)
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("APPDATA"); d != "" {
			dirs = append(dirs, filepath.Join(d, "npm"))
		}
		if d := os.Getenv("LOCALAPPDATA"); d != "" {
			dirs = append(dirs, filepath.Join(d, "Programs", "claude"))
		}
	default:
		dirs = append(dirs, "/opt/homebrew/bin", "/usr/local/bin", "/usr/bin")
	}
	return dirs
}

// Find returns the first of programs on the trusted path (see [TrustedPath];
// on Windows their .exe, then their .cmd), else the first executable file
// of also (copies an app keeps of its own). A file that is, or links to, a
// file inside folder is the repository's, not the person's, and is passed
// over. When none is found the error wraps [engines.ErrNotInstalled] and
// says hint.
func Find(home, folder string, programs, also []string, hint string) (string, error) {
	var candidates []string
	for _, dir := range TrustedPath(home, folder) {
		for _, name := range programs {
			names := []string{name}
			if runtime.GOOS == "windows" {
				names = []string{name + ".exe", name + ".cmd"}
			}
			for _, n := range names {
				candidates = append(candidates, filepath.Join(dir, n))
			}
		}
	}
	candidates = append(candidates, also...)
	for _, p := range candidates {
		if !Executable(p) {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil && folder != "" && within(real, folder) {
			continue // a link into the work folder is the repository's, not the person's
		}
		return p, nil
	}
	return "", fmt.Errorf("%w: %s", engines.ErrNotInstalled, hint)
}

// Executable reports whether p is a file this process may run (on Windows:
// any file).
func Executable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode()&0o111 != 0
}

// within reports whether p is folder or inside it, links followed.
func within(p, folder string) bool {
	real := func(s string) string {
		if r, err := filepath.EvalSymlinks(s); err == nil {
			return r
		}
		return filepath.Clean(s)
	}
	rel, err := filepath.Rel(real(folder), real(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// shellPath caches the login shell's PATH: a login shell can take seconds
// to start, and runs start often.
var shellPath struct {
	mu  sync.Mutex
	at  time.Time
	val string
}

// shellPathTTL is how long a login shell's PATH is reused.
const shellPathTTL = 5 * time.Minute

// loginShellPath is PATH as the person's login shell sets it, or "".
func loginShellPath() string {
	shellPath.mu.Lock()
	defer shellPath.mu.Unlock()
	if !shellPath.at.IsZero() && time.Since(shellPath.at) < shellPathTTL {
		return shellPath.val
	}
	shellPath.val, shellPath.at = readLoginShellPath(), time.Now()
	return shellPath.val
}

func readLoginShellPath() string {
	if runtime.GOOS == "windows" {
		return ""
	}
	shell := os.Getenv("SHELL")
	if shell == "" || !filepath.IsAbs(shell) {
		shell = "/bin/sh"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	const mark = "__ENSEMBLE_PATH__"
	cmd := exec.CommandContext(ctx, shell, "-l", "-c", `printf '\n`+mark+`%s\n' "$PATH"`)
	cmd.Stdin = nil
	cmd.Dir = "/"
	// The shell stays in the runtime's process group, so stopping the runtime's group (Ctrl-C,
	// systemd) stops what a slow profile started too; it dies with a runtime killed outright; and
	// a profile's background programs holding its output do not hold this call past the timeout.
	dieWithRuntime(cmd)
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		return ""
	}
	for _, l := range bytes.Split(out, []byte("\n")) {
		if p, ok := bytes.CutPrefix(l, []byte(mark)); ok {
			return string(p)
		}
	}
	return ""
}
