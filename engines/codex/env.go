package codex

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/engines/agentproc"
)

// keyVariables would bill an API account instead of the person's plan (spec
// 003 §6, KEY_VARIABLES). The one a provider in the person's own config.toml
// reads its key from (env_key) is kept: that provider is how they set Codex up.
var keyVariables = []string{"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN"}

// envKeyLine finds a provider's env_key in config.toml. A full TOML reader is
// not needed to learn which variable names a provider reads.
var envKeyLine = regexp.MustCompile(`(?m)^\s*env_key\s*=\s*["']([A-Za-z_][A-Za-z0-9_]*)["']`)

// providerKeys are the variables the providers in codexHome/config.toml read
// their keys from.
func providerKeys(codexHome string) []string {
	if codexHome == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range envKeyLine.FindAllSubmatch(b, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// codexHomeOf is where Codex keeps its config and sessions in env: CODEX_HOME,
// else ~/.codex.
func codexHomeOf(env []string) string { return agentproc.ConfigDir(env, "CODEX_HOME", ".codex") }

// agentEnv is the environment codex runs with (see [agentproc.Env]): base
// without the host session's variables, HOME set to home when given, PATH set
// to path, then extra; a key variable is left out unless a provider of the
// person's own config.toml reads it or extra sets it.
func agentEnv(base []string, home, path string, extra map[string]string) []string {
	env := agentproc.Env(base, agentproc.HostSession, home, path, extra)
	keep := providerKeys(codexHomeOf(env))
	out := env[:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(keyVariables, k) && !slices.Contains(keep, k) {
			if _, asked := extra[k]; !asked {
				continue
			}
		}
		out = append(out, kv)
	}
	return out
}
