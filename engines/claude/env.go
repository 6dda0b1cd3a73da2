package claude

import (
	"maps"
	"runtime"
	"slices"
	"strings"
)

// keyVariables would bill an API account instead of the person's plan
// (spec 003 §6, KEY_VARIABLES). A key the person set in their own
// ~/.claude/settings.json (env, apiKeyHelper) still applies: Claude Code
// reads that file itself.
var keyVariables = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}

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

// providerVariables are removed only when the host session manages the
// provider (CLAUDE_CODE_PROVIDER_MANAGED_BY_HOST): then they are the app's,
// written over the person's own.
var providerVariables = []string{
	"ANTHROPIC_BASE_URL", "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_FOUNDRY_BASE_URL",
	"ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION", "ANTHROPIC_FOUNDRY_RESOURCE",
	"ANTHROPIC_FOUNDRY_API_KEY", "AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_MODEL",
	"ANTHROPIC_SMALL_FAST_MODEL",
}

var providerPrefixes = []string{"CLAUDE_CODE_USE_"}

// mcpToolTimeout lets a question to the person through the run's MCP server
// wait a day (spec 003 §1, MCP_TOOL_TIMEOUT), as long as its card lasts.
const mcpToolTimeout = "86400000"

// agentEnv is the environment claude runs with: base without the variables
// above, HOME set to home when given, PATH set to path, then extra.
func agentEnv(base []string, home, path string, extra map[string]string) []string {
	managed := false
	for _, kv := range base {
		if k, v, _ := strings.Cut(kv, "="); k == "CLAUDE_CODE_PROVIDER_MANAGED_BY_HOST" && v != "" {
			managed = true
		}
	}
	drop := func(k string) bool {
		for _, n := range keyVariables {
			if k == n {
				return true
			}
		}
		for _, n := range hostSessionVariables {
			if k == n {
				return true
			}
		}
		for _, p := range hostSessionPrefixes {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
		if managed {
			for _, n := range providerVariables {
				if k == n {
					return true
				}
			}
			for _, p := range providerPrefixes {
				if strings.HasPrefix(k, p) {
					return true
				}
			}
			if strings.HasPrefix(k, "ANTHROPIC_DEFAULT_") && strings.HasSuffix(k, "_MODEL") {
				return true
			}
		}
		return false
	}
	set := map[string]string{"MCP_TOOL_TIMEOUT": mcpToolTimeout}
	var order []string
	var out []string
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || drop(k) {
			continue
		}
		if _, dup := set[k]; !dup {
			order = append(order, k)
		}
		set[k] = v
	}
	if _, ok := set["MCP_TOOL_TIMEOUT"]; ok && !slices.Contains(order, "MCP_TOOL_TIMEOUT") {
		order = append(order, "MCP_TOOL_TIMEOUT")
	}
	put := func(k, v string) {
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
		set[k] = v
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
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		put(k, extra[k])
	}
	for _, k := range order {
		out = append(out, k+"="+set[k])
	}
	return out
}
