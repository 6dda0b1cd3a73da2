package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// Agent is an agent process to run whole inside Ensemble's sandbox.
type Agent struct {
	Name   string   // the driver's name, for the log
	Bin    string   // its program
	Args   []string // its arguments
	Env    []string // its whole environment
	Folder string   // the work folder it runs in
	Home   string   // its HOME
	// Tmp is the run's own folder of files Ensemble made for it (an MCP config, the copies of its
	// settings folders); it must exist.
	Tmp string
	// State are the folders it keeps its sessions, logs and caches in: made if missing, writable.
	State []string
	// Config are the folders it reads its settings from and writes to while it runs: it works on
	// a copy of each, made in Tmp, so nothing a command plants there outlasts the run.
	Config []string
	// Prime are the arguments that make the agent set its Config folders up (unpack itself), run
	// once outside the sandbox, with no model and no run, when one of them is empty.
	Prime []string
	// Own are the agent's own sign-in files, which it reads although they hold keys.
	Own []string
	Log *slog.Logger
}

// Wrap is the program and arguments that run a inside Ensemble's sandbox under sb (see
// [System.Command]), with what an agent needs there: its home, install and Tmp readable, its own
// sign-in readable, its state folders writable and its settings folders a copy for the run.
func (s System) Wrap(ctx context.Context, sb engines.Sandbox, a Agent) (string, []string, error) {
	sb.AllowRead = append(slices.Clone(sb.AllowRead), a.Home, a.Tmp)
	sb.AllowRead = append(sb.AllowRead, installOf(a.Bin)...)
	sb.DenyRead = slices.DeleteFunc(slices.Clone(sb.DenyRead), func(p string) bool { return slices.Contains(a.Own, p) })
	x := Extra{Write: a.State}
	for _, dir := range a.State {
		// Made now: from inside the sandbox the agent could not make them in its home.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", nil, fmt.Errorf("%s: start: %w", a.Name, err)
		}
	}
	if len(a.Prime) > 0 && slices.ContainsFunc(a.Config, emptyDir) {
		prime(ctx, a)
	}
	if len(a.Config) > 0 {
		x.Scratch = map[string]string{}
	}
	for i, dir := range a.Config {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", nil, fmt.Errorf("%s: start: %w", a.Name, err)
		}
		cp := filepath.Join(a.Tmp, fmt.Sprintf("settings-%d", i))
		if err := scratchCopy(dir, cp); err != nil {
			return "", nil, fmt.Errorf("%s: start: %w", a.Name, err)
		}
		x.Scratch[dir] = cp
	}
	return s.Command(sb, x, a.Folder, a.Bin, a.Args)
}

// emptyDir reports a folder with nothing in it, or none there.
func emptyDir(dir string) bool {
	es, err := os.ReadDir(dir)
	return err != nil || len(es) == 0
}

// prime runs the agent once with its Prime arguments, outside the sandbox, so it unpacks itself
// where the sandbox then keeps it read-only; a failure shows when the run starts.
func prime(ctx context.Context, a Agent) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.Bin, a.Prime...)
	cmd.Env = a.Env
	if out, err := cmd.CombinedOutput(); err != nil && a.Log != nil {
		line := strings.TrimSpace(string(out))
		if i := strings.LastIndexByte(line, '\n'); i >= 0 {
			line = line[i+1:]
		}
		a.Log.Warn("sandbox: the agent could not set itself up", "agent", a.Name, "err", err, "output", line)
	}
}

// installOf are the folders the agent's program is installed in, which it reads wherever they
// are (under another account's home, which the sandbox hides): the program's folder and, for an
// npm package, the node_modules it lies in, both through its links and not.
func installOf(bin string) []string {
	out := []string{filepath.Dir(bin)}
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		out = append(out, filepath.Dir(real))
		if i := strings.Index(real, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i >= 0 {
			out = append(out, real[:i+len("/node_modules")])
		}
	}
	return out
}

// Getenv looks a variable up in an environment list: the last one set wins, as for a process.
func Getenv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
