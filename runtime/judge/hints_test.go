package judge

import (
	"strings"
	"testing"
)

// TestHintsNameWhatWorks: a refusal that names the git permission to choose names one that lets
// the command (choosing it, the command is no longer refused for git), and a sentence quotes the
// command as it was written, quotes and redirects included.
func TestHintsNameWhatWorks(t *testing.T) {
	levels := map[string]Git{"Commit": GitCommit, "No limits": GitAny}
	for _, tc := range []struct {
		line string
		git  Git
		want string // the level the sentence names
	}{
		{"git push origin main", GitLocal, "No limits"},
		{"git push origin main", GitCommit, "No limits"},
		{"git -c alias.up=push up", GitLocal, "No limits"},
		{"git send-pack host:repo main", GitLocal, "No limits"},
		{"git subtree push --prefix=docs origin gh-pages", GitLocal, "No limits"},
		{"git commit -m x", GitLocal, "Commit"},
		{"git merge main", GitLocal, "Commit"},
	} {
		s := with(unattended, func(s *Settings) { s.Git = tc.git })
		v := Decide(sh(tc.line), s)
		if v.Decision != Refuse || !strings.Contains(v.Reason, "change it to "+tc.want+" to let it") {
			t.Errorf("%q under %s: %s %q, want a refusal naming %s", tc.line, tc.git, v.Decision, v.Reason, tc.want)
			continue
		}
		s.Git = levels[tc.want]
		if v := Decide(sh(tc.line), s); v.Decision == Refuse {
			t.Errorf("%q under %s, the level the hint names: still refused: %q", tc.line, tc.want, v.Reason)
		}
	}

	for _, tc := range []struct{ line, quoted string }{
		{"echo 'hello' >> README.md", "`echo 'hello' >> README.md`"},
		{`printf "%s\n" done > out.txt`, "`printf \"%s\\n\" done > out.txt`"},
		{"cd src && touch  made.txt", "`touch  made.txt`"},
	} {
		v := Decide(sh(tc.line), with(askMode))
		if v.Decision != Ask || !strings.Contains(v.Reason, tc.quoted) {
			t.Errorf("%q: %s %q, want it quoted as %s", tc.line, v.Decision, v.Reason, tc.quoted)
		}
	}
}
