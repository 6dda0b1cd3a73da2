package enginetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// GeminiEnv returns a fresh home for Gemini CLI (agent-clis.md §6) whose ~/.gemini/settings.json
// selects API-key sign-in and turns off usage statistics and updates, and the environment that
// points it at the scripted model at url (the Gemini API, which Gemini CLI allows over http only
// for a loopback host) with a dummy key, trusts the work folder and keeps its temporary files in
// the home. Set HOME to home and add env to the agent's environment.
func GeminiEnv(t testing.TB, url string) (home string, env map[string]string) {
	t.Helper()
	home = t.TempDir()
	tmp := filepath.Join(home, "tmp")
	for _, d := range []string{filepath.Join(home, ".gemini"), tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
		"general":  map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	}
	b, _ := json.Marshal(settings)
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	env = map[string]string{
		"GEMINI_API_KEY":             "dummy",
		"GOOGLE_GEMINI_BASE_URL":     url,
		"GEMINI_CLI_TRUST_WORKSPACE": "true",
		"TMPDIR":                     tmp,
	}
	return home, env
}

// CopilotEnv returns a fresh home for GitHub Copilot CLI (agent-clis.md §8) and the environment
// of its offline bring-your-own-key mode: no GitHub sign-in, the model "fake-model" from the
// scripted model at url over Chat Completions, no update checks, temporary files in the home. Set
// HOME to home and add env to the agent's environment.
func CopilotEnv(t testing.TB, url string) (home string, env map[string]string) {
	t.Helper()
	home = t.TempDir()
	tmp := filepath.Join(home, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	env = map[string]string{
		"COPILOT_OFFLINE":           "true",
		"COPILOT_PROVIDER_BASE_URL": url + "/v1",
		"COPILOT_PROVIDER_TYPE":     "openai",
		"COPILOT_PROVIDER_API_KEY":  "dummy",
		"COPILOT_MODEL":             "fake-model",
		"COPILOT_AUTO_UPDATE":       "false",
		"TMPDIR":                    tmp,
	}
	return home, env
}

// ClaudeACPEnv returns a home for Zed's claude-code-acp adapter (agent-clis.md §7), made by
// [ClaudeHome] (its ~/.claude/settings.json points Claude Code at the scripted model at url), and
// the environment it needs besides: the same model address and dummy key (the adapter's Agent SDK
// may not read the settings' env), its temporary files in the home, and, as root, IS_SANDBOX=1,
// without which Claude Code refuses to skip its own permission prompts and the adapter cannot
// start a session. Set HOME to home and add env to the agent's environment.
func ClaudeACPEnv(t testing.TB, url string) (home string, env map[string]string) {
	t.Helper()
	home = ClaudeHome(t, url)
	tmp := filepath.Join(home, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	env = map[string]string{
		"ANTHROPIC_BASE_URL":                       url,
		"ANTHROPIC_API_KEY":                        "dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_TELEMETRY":                        "1",
		"TMPDIR":                                   tmp,
	}
	if os.Geteuid() == 0 {
		env["IS_SANDBOX"] = "1"
	}
	return home, env
}
