package agentproc

import (
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// hostSessionVariables are what a Claude session the runtime was started
// from sets for its commands (spec 003 §6, withoutHostSession), and
// Ensemble's own tokens.
var hostSessionVariables = []string{
	"CLAUDECODE", "CLAUDE_CODE_CHILD_SESSION", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_MESSAGING_SOCKET",
	"CLAUDE_CODE_MESSAGING_TOKEN", "CLAUDE_PID", "CLAUDE_EFFORT", "AI_AGENT", "CLAUDE_CODE_ENTRYPOINT",
	"CLAUDE_CODE_PROVIDER_MANAGED_BY_HOST", "CLAUDE_CODE_OAUTH_SCOPES", "CLAUDE_CODE_SUBSCRIPTION_TYPE",
	"ENSEMBLE_DESKTOP_TOKEN", "ENSEMBLE_INTERNAL_TOKEN",
}

var hostSessionPrefixes = []string{"CLAUDE_CODE_HOST_", "CLAUDE_CODE_DESKTOP_", "CLAUDE_CODE_SDK_HAS_", "CLAUDE_AGENT_SDK_"}

// HostSession reports whether the variable named is one a Claude session the
// runtime was started from sets for its commands (spec 003 §6,
// withoutHostSession), or one of Ensemble's own tokens.
func HostSession(name string) bool {
	if slices.Contains(hostSessionVariables, name) {
		return true
	}
	for _, p := range hostSessionPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Env is the environment an agent CLI runs with: base without the variables
// drop reports (nil drops none), HOME (and USERPROFILE on Windows) set to
// home when given, PATH set to path when given, then each of extra in turn,
// its keys sorted. A variable keeps the place it first had, with the last
// value given; entries without "=" are left out.
func Env(base []string, drop func(name string) bool, home, path string, extra ...map[string]string) []string {
	set := map[string]string{}
	var order []string
	put := func(k, v string) {
		if _, ok := set[k]; !ok {
			order = append(order, k)
		}
		set[k] = v
	}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || (drop != nil && drop(k)) {
			continue
		}
		put(k, v)
	}
	if home != "" {
		put("HOME", home)
		if runtime.GOOS == "windows" {
			put("USERPROFILE", home)
		}
	}
	if path != "" {
		put("PATH", path)
	}
	for _, m := range extra {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			put(k, m[k])
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+set[k])
	}
	return out
}

// ConfigDir is where an agent keeps its config in env: the folder override names (CODEX_HOME,
// CLAUDE_CONFIG_DIR), else sub under the home folder env gives (HOME; USERPROFILE on Windows), or
// "" when env names neither.
func ConfigDir(env []string, override, sub string) string {
	var home, dir string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == override:
			dir = v
		case k == "HOME":
			home = v
		case k == "USERPROFILE" && runtime.GOOS == "windows" && home == "":
			home = v
		}
	}
	switch {
	case dir != "":
		return dir
	case home != "":
		return filepath.Join(home, sub)
	}
	return ""
}
