package jobs

import (
	"path/filepath"
	"strings"

	"github.com/ensemblework/ensemble/runtime/judge"
)

// recommend picks the answer a careful person would give to a call the judge asked about, and
// says why in one line. Only a call that waits because of Ask mode alone and stays inside the
// run's own folder is recommended for Allow once: everything the judge asks about for a reason
// of its own (outside the folder, a hook, another computer, what it cannot read) is Refuse.
func recommend(v judge.Verdict, tool judge.Tool, s Settings, workDir string) (int, string) {
	switch v.Rule {
	case "mode":
		return recommendInMode(v.Touches, tool, s, workDir)
	case "git-ask-commit":
		return AllowOnce, "A commit stays in this repository on this computer, and you asked to see each one."
	case "outside-write":
		return Deny, "It changes files outside the run's folder."
	case "hook":
		return Deny, "A hook runs programs later, outside this run's rules."
	case "remote":
		return Deny, "It reaches another computer."
	case "internet-off":
		return Deny, "This run has the internet off."
	case "unsandboxed":
		return Deny, "It asks to run outside the sandbox."
	case "glob-secrets":
		return Deny, "It may read keys or sign-ins."
	}
	return Deny, "Ensemble cannot tell what it would do."
}

// recommendInMode judges a call that waits only because the run is in Ask mode.
func recommendInMode(t judge.Touches, tool judge.Tool, s Settings, workDir string) (int, string) {
	dir := filepath.Clean(workDir)
	for _, w := range t.Writes {
		if workDir == "" || !inside(filepath.Clean(w), dir) {
			return Deny, "It changes files outside the run's folder."
		}
	}
	if len(t.Folders) > 0 {
		return Deny, "It would open a folder outside the run's for changes."
	}
	if len(t.Hosts) > 0 {
		if tool == judge.ToolFetch {
			return AllowOnce, "It only reads a web page, and this run has the internet on."
		}
		return Deny, "It sends something to " + t.Hosts[0] + "; allow it only if you expect that."
	}
	why := "It works only inside the run's own folder"
	if len(t.Writes) > 0 {
		why = "It changes only files in the run's own folder"
	}
	if tool == judge.ToolShell && s.Sandbox {
		why += ", in the sandbox"
	}
	return AllowOnce, why + "."
}

// inside reports whether p is dir or under it.
func inside(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
