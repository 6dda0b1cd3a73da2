package jobs

import (
	"path/filepath"
	"testing"

	"github.com/ensemblework/ensemble/runtime/judge"
)

// TestRecommend runs real calls through the judge and checks what Needs me recommends for each ask:
// Allow once only for what waits because of Ask mode alone and stays in the run's own folder.
func TestRecommend(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "notes.md")
	ask := DefaultSettings()
	readwrite := DefaultSettings()
	readwrite.Outside = judge.OutsideReadWrite
	noSandbox := DefaultSettings()
	noSandbox.Sandbox = false
	commits := DefaultSettings()
	commits.Git, commits.AskBeforeCommit = judge.GitCommit, true
	shell := func(cmd string) judge.Call { return judge.Call{Tool: judge.ToolShell, Command: cmd, Cwd: dir} }
	edit := func(p string) judge.Call { return judge.Call{Tool: judge.ToolEdit, Paths: []string{p}} }
	tests := []struct {
		name string
		call judge.Call
		s    Settings
		want int
		why  string
	}{
		{"an edit in the folder", edit(filepath.Join(dir, "main.go")), ask, AllowOnce, "It changes only files in the run's own folder."},
		{"a command that makes a file in the folder", shell("touch made.txt"), ask, AllowOnce, "It changes only files in the run's own folder, in the sandbox."},
		{"the same without the sandbox", shell("touch made.txt"), noSandbox, AllowOnce, "It changes only files in the run's own folder."},
		{"a web page, internet on", judge.Call{Tool: judge.ToolFetch, URL: "https://example.com/docs"}, ask, AllowOnce, "It only reads a web page, and this run has the internet on."},
		{"a command that sends to a host", shell("curl https://example.com"), ask, Deny, "It sends something to example.com; allow it only if you expect that."},
		{"an edit outside the folder", edit(outside), readwrite, Deny, "It changes files outside the run's folder."},
		{"a hook", edit(filepath.Join(dir, ".git", "hooks", "pre-commit")), ask, Deny, "A hook runs programs later, outside this run's rules."},
		{"another computer", shell("ssh host ls"), ask, Deny, "It reaches another computer."},
		{"a program it cannot name", shell("$(foo)"), ask, Deny, "Ensemble cannot tell what it would do."},
		{"a commit the person asked to see", shell("git commit -m 'fix: the tests'"), commits, AllowOnce, "A commit stays in this repository on this computer, and you asked to see each one."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judge.Decide(tt.call, JudgeSettings(tt.s, FolderNamed, dir, Places{Home: "/home/someone"}, judge.Kept{}))
			if v.Decision != judge.Ask {
				t.Fatalf("the judge decided %s (%s: %s), want an ask", v.Decision, v.Rule, v.Reason)
			}
			got, why := recommend(v, tt.call.Tool, tt.s, dir)
			if got != tt.want || why != tt.why {
				t.Errorf("recommend (rule %s) = %d %q, want %d %q", v.Rule, got, why, tt.want, tt.why)
			}
		})
	}
}

// TestRecommendWithoutFolder: a run whose folder is not known gets Refuse for anything that writes.
func TestRecommendWithoutFolder(t *testing.T) {
	v := judge.Verdict{Decision: judge.Ask, Rule: "mode", Touches: judge.Touches{Writes: []string{"/tmp/x"}}}
	if got, why := recommend(v, judge.ToolEdit, DefaultSettings(), ""); got != Deny || why != "It changes files outside the run's folder." {
		t.Errorf("recommend = %d %q, want Refuse", got, why)
	}
}
