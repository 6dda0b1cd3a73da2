package claude

import (
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/engines/agentproc"
)

// keyVariables would bill an API account instead of the person's plan
// (spec 003 §6, KEY_VARIABLES). A key the person set in their own
// ~/.claude/settings.json (env, apiKeyHelper) still applies: Claude Code
// reads that file itself.
var keyVariables = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}

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

// agentEnv is the environment claude runs with (see [agentproc.Env]): base
// without the host session's variables, the key variables and, when the host
// session manages the provider, the provider's; MCP_TOOL_TIMEOUT after base's
// own variables (base's value, else [mcpToolTimeout]); HOME set to home when
// given, PATH set to path, then extra.
func agentEnv(base []string, home, path string, extra map[string]string) []string {
	managed := false
	timeout := mcpToolTimeout
	own := make([]string, 0, len(base)+1)
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if k == "CLAUDE_CODE_PROVIDER_MANAGED_BY_HOST" && v != "" {
			managed = true
		}
		if ok && k == "MCP_TOOL_TIMEOUT" {
			timeout = v
			continue
		}
		own = append(own, kv)
	}
	own = append(own, "MCP_TOOL_TIMEOUT="+timeout)
	drop := func(k string) bool {
		if agentproc.HostSession(k) || slices.Contains(keyVariables, k) {
			return true
		}
		if managed {
			if slices.Contains(providerVariables, k) {
				return true
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
	return agentproc.Env(own, drop, home, path, extra)
}
