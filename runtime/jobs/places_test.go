package jobs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/judge"
)

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// TestRunPlaces: the judge's settings a run gets know read-only git is quiet in a clean
// repository and not once its config runs a program, in the folder and in a linked worktree
// (whose config is the main repository's), and know the runtime's address and program.
func TestRunPlaces(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	repo := filepath.Join(home, "code", "app")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q")
	gitIn(t, repo, "commit", "-q", "--allow-empty", "-m", "x")
	wt := filepath.Join(home, "wt")
	gitIn(t, repo, "worktree", "add", "-q", "-b", "b", wt)

	p := NewPlaces(home, filepath.Join(home, ".local", "share", "ensemble"), "http://127.0.0.1:47123/mcp/run")
	if p.Runtime != "127.0.0.1:47123" || p.Binary == "" {
		t.Fatalf("places: runtime %q, binary %q", p.Runtime, p.Binary)
	}
	if !slices.Contains(p.SkillDirs, filepath.Join(home, ".claude", "skills")) || !slices.Contains(p.SkillDirs, filepath.Join(home, ".agents", "skills")) {
		t.Errorf("skill folders: %v", p.SkillDirs)
	}
	set := DefaultSettings()
	status := judge.Call{Tool: judge.ToolShell, Command: "git status"}
	for _, dir := range []string{repo, wt} {
		js := JudgeSettings(set, FolderNamed, dir, p, judge.Kept{})
		if !js.GitConfigClean {
			t.Fatalf("%s: a fresh repository's config is not clean", dir)
		}
		if v := judge.Decide(status, js); v.Decision != judge.Allow || v.Rule != "quiet" {
			t.Errorf("%s: git status in Ask mode: got %v (rule %s), want quiet", dir, v, v.Rule)
		}
		if !slices.Contains(js.CodeDirs, p.Binary) || js.Runtime != p.Runtime {
			t.Errorf("%s: settings lack Ensemble's program or address: %+v", dir, js)
		}
		if v := judge.Decide(judge.Call{Tool: judge.ToolShell, Command: "curl http://localhost:47123/api/needs"}, js); v.Decision != judge.Refuse {
			t.Errorf("a call to the runtime's own address: got %v", v)
		}
	}
	// The main repository's config runs a program: its worktree's git status follows the mode too.
	gitIn(t, repo, "config", "core.fsmonitor", "./watch.sh")
	for _, dir := range []string{repo, wt} {
		js := JudgeSettings(set, FolderNamed, dir, p, judge.Kept{})
		if js.GitConfigClean {
			t.Errorf("%s: a config with an fsmonitor is clean", dir)
		}
		if v := judge.Decide(status, js); v.Decision != judge.Ask || v.Rule != "mode" {
			t.Errorf("%s: git status with an fsmonitor in Ask mode: got %v (rule %s), want ask", dir, v, v.Rule)
		}
	}
	gitIn(t, repo, "config", "--unset", "core.fsmonitor")
	// A repository nested in the folder has a config of its own.
	sub := filepath.Join(repo, "vendor", "x")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, sub, "init", "-q")
	gitIn(t, sub, "config", "diff.x.textconv", "cat")
	js := JudgeSettings(set, FolderNamed, repo, p, judge.Kept{})
	if v := judge.Decide(status, js); v.Rule != "quiet" {
		t.Errorf("git status in the folder: got %v (rule %s), want quiet", v, v.Rule)
	}
	if v := judge.Decide(judge.Call{Tool: judge.ToolShell, Command: "cd vendor/x && git status"}, js); v.Rule == "quiet" {
		t.Errorf("git status in a nested repository with a textconv: got quiet, want it to follow the mode")
	}
	if v := judge.Decide(judge.Call{Tool: judge.ToolShell, Command: "cd vendor && git status"}, js); v.Rule != "quiet" {
		t.Errorf("git status in a plain subfolder: got %v (rule %s), want quiet", v, v.Rule)
	}
}

func TestSkillDirsFollowSettings(t *testing.T) {
	env := map[string]string{"CLAUDE_CONFIG_DIR": "/cfg/claude", "CODEX_HOME": "relative/ignored"}
	dirs := SkillDirs("/home/me", func(k string) string { return env[k] })
	for _, want := range []string{"/cfg/claude/skills", "/home/me/.codex/skills", "/home/me/.config/opencode/skill", "/home/me/.kimi-code/skills"} {
		if !slices.Contains(dirs, want) {
			t.Errorf("skill folders lack %s: %v", want, dirs)
		}
	}
	if slices.Contains(dirs, "/home/me/.claude/skills") {
		t.Errorf("CLAUDE_CONFIG_DIR did not move Claude Code's skills: %v", dirs)
	}
}
