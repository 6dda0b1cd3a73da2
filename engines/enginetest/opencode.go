package enginetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// OpencodeEnv returns a fresh home for opencode (agent-clis.md §5) whose config points it at the
// scripted model at url (Chat Completions through the bundled @ai-sdk/openai-compatible, model
// "fake/fake-model"), and the environment that makes opencode use it and stay offline. Set HOME to
// home and add env to the agent's environment.
func OpencodeEnv(t testing.TB, url string) (home string, env map[string]string) {
	t.Helper()
	home = t.TempDir()
	dir := func(name string) string {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := map[string]any{
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake local model",
			"options": map[string]any{"baseURL": url + "/v1", "apiKey": "dummy"},
			"models":  map[string]any{"fake-model": map[string]any{"name": "Fake Model", "tool_call": true}},
		}},
		"model": "fake/fake-model", "small_model": "fake/fake-model",
		"autoupdate": false, "share": "disabled",
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir("config"), "opencode-test.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env = map[string]string{
		"OPENCODE_CONFIG":                  file,
		"XDG_CONFIG_HOME":                  dir(".config"),
		"XDG_DATA_HOME":                    dir(".local/share"),
		"XDG_CACHE_HOME":                   dir(".cache"),
		"XDG_STATE_HOME":                   dir(".local/state"),
		"TMPDIR":                           dir("tmp"),
		"OPENCODE_DISABLE_MODELS_FETCH":    "1",
		"OPENCODE_DISABLE_AUTOUPDATE":      "1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD":    "1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
		"OPENCODE_DISABLE_SHARE":           "1",
	}
	return home, env
}
