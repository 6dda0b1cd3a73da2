package agentproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"time"
)

// probeTimeout bounds one probe command (`--version`, a sign-in status).
const probeTimeout = 20 * time.Second

// Probe runs an agent's own command to learn something about it (its version, whether it is
// signed in), with a time limit, in a process group of its own, and returns its output and exit
// code. home, when set, replaces HOME.
func Probe(ctx context.Context, bin, home string, args ...string) (out string, code int, err error) {
	return ProbeEnv(ctx, Env(os.Environ(), HostSession, home, ""), bin, args...)
}

// ProbeEnv is [Probe] with the environment env, the one the agent's runs get: detection then sees
// what a run will (a key variable a run goes without does not sign it in).
func ProbeEnv(ctx context.Context, env []string, bin string, args ...string) (out string, code int, err error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	OwnGroup(cmd)
	cmd.Cancel = func() error { return SignalGroup(cmd, true) }
	cmd.WaitDelay = time.Second
	cmd.Env = env
	cmd.Stdin = nil
	b, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return strings.TrimSpace(string(b)), ee.ExitCode(), nil
	}
	return strings.TrimSpace(string(b)), 0, err
}

// FirstLine is the first non-empty line of s.
func FirstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
