package enginetest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// CodexProviderKey is the variable the provider [CodexHome] writes reads its
// key from; set it (to anything) in the CLI's environment.
const CodexProviderKey = "ENSEMBLE_FAKE_API_KEY"

// CodexHome makes a Codex home folder (CODEX_HOME) whose config.toml points
// Codex at the scripted model at url as a provider of the person's own, as
// agent-clis.md §4 observed it: a provider that needs no OpenAI sign-in,
// speaking the Responses API, its key read from [CodexProviderKey]. model is
// the slug Codex asks for; a slug from Codex's bundled catalog (gpt-5.5) gets
// the full tool set, apply_patch included.
//
// It also returns a temporary folder for TMPDIR outside the home: with
// CODEX_HOME under TMPDIR, Codex refuses to make its sandbox helpers and every
// sandboxed command fails. The two are siblings in one test folder.
func CodexHome(t testing.TB, url, model string) (codexHome, tmpDir string) {
	t.Helper()
	root := t.TempDir()
	codexHome = filepath.Join(root, "codex-home")
	tmpDir = filepath.Join(root, "tmp")
	for _, d := range []string{codexHome, tmpDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	config := "model = " + strconv.Quote(model) + `
model_provider = "ensemble_test"
check_for_update_on_startup = false

[model_providers.ensemble_test]
name = "Scripted test model"
base_url = ` + strconv.Quote(url+"/v1") + `
env_key = "` + CodexProviderKey + `"
wire_api = "responses"

[analytics]
enabled = false
`
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return codexHome, tmpDir
}
