package jobs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/judge"
)

// TestCloneForAgent makes the clone the judge asks for: the repository is there, with no hooks and
// its .git/config and hooks read-only; a folder that is there already, one outside the run folder
// and an address that is not https are refused.
func TestCloneForAgent(t *testing.T) {
	var bare string
	srv := servedRepo(t, func(b string) {
		bare = b
		// A hook in the served repository never reaches the clone.
		os.WriteFile(filepath.Join(b, "hooks", "post-checkout"), []byte("#!/bin/sh\ntouch /tmp/planted\n"), 0o755)
	})

	work := t.TempDir()
	dir := filepath.Join(work, "repo")
	cl := judge.Clone{URL: srv.URL + "/repo.git", Dir: dir}
	if err := cloneForAgent(t.Context(), cl, work); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "README.md")); err != nil || string(b) != "# Hello\n" {
		t.Errorf("README.md: %q %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, ".git", "config")); err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Errorf(".git/config is writable: %v %v", fi.Mode(), err)
	}
	hooks, _ := os.ReadDir(filepath.Join(dir, ".git", "hooks"))
	if fi, err := os.Stat(filepath.Join(dir, ".git", "hooks")); err != nil || fi.Mode().Perm()&0o222 != 0 || len(hooks) != 0 {
		t.Errorf(".git/hooks: %v %v, %d hooks", fi.Mode(), err, len(hooks))
	}
	for name, bad := range map[string]judge.Clone{
		"there already":  cl,
		"outside":        {URL: cl.URL, Dir: filepath.Join(t.TempDir(), "x")},
		"the run folder": {URL: cl.URL, Dir: work},
		"not https":      {URL: "file://" + bare, Dir: filepath.Join(work, "y")},
	} {
		if err := cloneForAgent(t.Context(), bad, work); err == nil {
			t.Errorf("%s: cloned", name)
		}
	}
	// A clone that fails leaves no folder and says why.
	err := cloneForAgent(t.Context(), judge.Clone{URL: srv.URL + "/missing.git", Dir: filepath.Join(work, "missing")}, work)
	if err == nil || !strings.Contains(err.Error(), "git clone") {
		t.Errorf("a missing repository: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "missing")); err == nil {
		t.Error("the failed clone left its folder")
	}
}
