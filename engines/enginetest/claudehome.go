package enginetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// ClaudeHome makes a home folder whose ~/.claude/settings.json points Claude Code at the scripted
// model at url, as a person's own settings point it at a gateway: the key lives there, not in the
// environment (the driver removes API-key variables from it), and no other traffic is sent.
func ClaudeHome(t testing.TB, url string) string {
	t.Helper()
	home := t.TempDir()
	settings := map[string]any{"env": map[string]string{
		"ANTHROPIC_BASE_URL":                       url,
		"ANTHROPIC_API_KEY":                        "dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_TELEMETRY":                        "1",
	}}
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(settings)
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}
