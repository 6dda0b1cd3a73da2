package jobs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// gitTop is the top folder of the git repository dir is in.
func gitTop(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(strings.TrimSpace(string(out)))
}

// prepareFolder makes the run's folder: nothing for a folder the person named (it must still be
// there), a new folder for the workspace, a worktree on a new branch for a worktree.
func prepareFolder(ctx context.Context, j Job) error {
	switch j.FolderKind {
	case FolderNamed:
		if fi, err := os.Stat(j.WorkDir); err != nil || !fi.IsDir() {
			return fmt.Errorf("The folder %s is no longer there.", j.WorkDir)
		}
		return nil
	case FolderWorkspace, FolderProject:
		if fi, err := os.Stat(j.WorkDir); err == nil && fi.IsDir() {
			return nil // made by an earlier start of this run
		}
		if err := os.MkdirAll(j.WorkDir, 0o700); err != nil {
			return fmt.Errorf("Could not make the run's folder %s: %v.", j.WorkDir, err)
		}
		// A repository with one empty commit, so the run's changes can be listed against it.
		if _, err := git(ctx, j.WorkDir, "init", "--quiet"); err == nil {
			git(ctx, j.WorkDir, "-c", "user.name=Ensemble", "-c", "user.email=ensemble@localhost",
				"commit", "--quiet", "--allow-empty", "-m", "The run's folder, made by Ensemble")
		}
		return nil
	case FolderClone:
		if fi, err := os.Stat(j.WorkDir); err == nil && fi.IsDir() {
			return nil // cloned by an earlier start of this run
		}
		return cloneInto(ctx, j.Folder, j.WorkDir)
	case FolderWorktree:
		if fi, err := os.Stat(j.WorkDir); err == nil && fi.IsDir() {
			return nil // made by an earlier start of this run
		}
		if err := os.MkdirAll(filepath.Dir(j.WorkDir), 0o700); err != nil {
			return fmt.Errorf("Could not make the worktrees folder: %v.", err)
		}
		cmd := exec.CommandContext(ctx, "git", "-C", j.Folder, "worktree", "add", "-b", j.Branch, j.WorkDir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("Could not make a git worktree of %s on branch %s: %s.", j.Folder, j.Branch,
				strings.TrimSpace(Redact(string(out))))
		}
		return nil
	}
	return fmt.Errorf("Unknown folder kind %q.", j.FolderKind)
}

// resolvePath follows symlinks in an absolute path, resolving the longest prefix that exists, so
// the judge sees where a new file would really land.
func resolvePath(p string) (string, error) {
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
