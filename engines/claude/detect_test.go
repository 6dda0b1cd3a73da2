//go:build !windows

package claude

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
)

// TestDetectSeesWhatARunSees: a key only in Ensemble's environment does not sign Claude Code in,
// since runs go without it (spec 003 §6), and the problem says how to give Claude Code a key.
func TestDetectSeesWhatARunSees(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "claude")
	script := `#!/bin/sh
case "$1" in
--version) echo "2.1.197 (Claude Code)" ;;
auth) if [ -n "$ANTHROPIC_API_KEY$CLAUDE_CODE_OAUTH_TOKEN" ] || [ -f "$HOME/.claude/settings.json" ]; then echo '{"loggedIn":true}'; else echo '{"loggedIn":false}'; exit 1; fi ;;
esac
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		env      []string
		settings bool
		want     engines.SignIn
		problem  string
	}{
		{"key only in the environment", []string{"ANTHROPIC_API_KEY=sk-ant-x"}, false, engines.SignedOut, "they go without ANTHROPIC_API_KEY"},
		{"token only in the environment", []string{"CLAUDE_CODE_OAUTH_TOKEN=t"}, false, engines.SignedOut, "they go without CLAUDE_CODE_OAUTH_TOKEN"},
		{"nothing", nil, false, engines.SignedOut, "Claude Code is not signed in. Run `claude`"},
		{"key in its settings", []string{"ANTHROPIC_API_KEY=sk-ant-x"}, true, engines.SignedIn, ""},
	} {
		home := t.TempDir()
		if tc.settings {
			os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
			os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"env":{"ANTHROPIC_API_KEY":"sk-ant-x"}}`), 0o600)
		}
		d := New(WithBinary(fake))
		d.environ = func() []string { return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, tc.env...) }
		det := d.Detect(context.Background(), home)
		if det.SignedIn != tc.want || !strings.Contains(det.Problem, tc.problem) {
			t.Errorf("%s: signed in %v, problem %q; want %v, %q", tc.name, det.SignedIn, det.Problem, tc.want, tc.problem)
		}
		if tc.want == engines.SignedOut && (!strings.Contains(det.Problem, `"apiKeyHelper"`) || !strings.Contains(det.Problem, `"env": {"ANTHROPIC_API_KEY"`)) {
			t.Errorf("%s: the problem does not say how to give Claude Code a key: %q", tc.name, det.Problem)
		}
	}
}
