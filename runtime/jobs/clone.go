package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/sandbox"
	"github.com/ensemblework/ensemble/runtime/judge"
)

// cloneTimeout bounds a clone Ensemble makes for an agent.
const cloneTimeout = 5 * time.Minute

// cloneForAgent makes the clone the judge asked for in place of the agent's `git clone` (spec 003
// §1: with the sandbox on, a clone the agent made would leave it a .git/config and hooks to plant
// code in that runs outside the sandbox later): into a new folder inside the work folder, with no
// hooks or template, no submodules and no password prompt, inside Ensemble's sandbox where it can
// run here, then the clone's .git/config and .git/hooks made read-only.
func cloneForAgent(ctx context.Context, cl judge.Clone, workDir string) error {
	if err := checkCloneURL(cl.URL); err != nil {
		return err
	}
	dir := filepath.Clean(cl.Dir)
	if rel, err := filepath.Rel(workDir, dir); err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is not a new folder inside the run folder", cl.Dir)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is there already", cl.Dir)
	}
	ctx, cancel := context.WithTimeout(ctx, cloneTimeout)
	defer cancel()
	args := []string{"-c", "core.hooksPath=/dev/null", "clone", "--template=", "--no-recurse-submodules"}
	if cl.Depth != "" {
		args = append(args, "--depth", cl.Depth)
	}
	if cl.Branch != "" {
		args = append(args, "--branch", cl.Branch)
	}
	if cl.SingleBranch {
		args = append(args, "--single-branch")
	}
	if cl.Filter != "" {
		args = append(args, "--filter", cl.Filter)
	}
	if cl.NoTags {
		args = append(args, "--no-tags")
	}
	args = append(args, "--quiet", "--", cl.URL, dir)
	// Into a folder made now: inside Ensemble's sandbox, with the internet on, it is all git may
	// change.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	prog, argv := sandboxedGit(ctx, dir, workDir, args)
	cmd := exec.CommandContext(ctx, prog, argv...)
	cmd.Dir = workDir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/false", "GIT_PROTOCOL_FROM_USER=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		msg := strings.TrimSpace(Redact(string(bytes.TrimSpace(out))))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("git clone: %s", msg)
	}
	git := filepath.Join(dir, ".git")
	hooks := filepath.Join(git, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(filepath.Join(git, "config"), 0o444); err != nil {
		return err
	}
	return os.Chmod(hooks, 0o555)
}

// sandboxedGit is git with args inside Ensemble's sandbox (spec 003 §1: the clone is made under
// it, with the internet on), writing only dir; where that sandbox cannot run here, git alone,
// which with no hooks and no template runs nothing of the repository's.
func sandboxedGit(ctx context.Context, dir, workDir string, args []string) (string, []string) {
	sys := sandbox.Local()
	bin, err := sys.Look("git")
	if err != nil || sys.Check(ctx, "Ensemble's clone") != nil {
		return "git", args
	}
	prog, argv, err := sys.Command(engines.Sandbox{On: true, Write: []string{dir}, Internet: true}, sandbox.Extra{}, workDir, bin, args)
	if err != nil {
		return "git", args
	}
	return prog, argv
}
