package codex

import (
	"github.com/ensemblework/ensemble/engines"
)

// mcpToolTimeout lets a question to the person through the run's MCP server
// wait a day (spec 003 §8, Codex's tool_timeout_sec), as long as its card
// lasts.
const mcpToolTimeout = 86400

// approvalPolicy is Codex's approval policy for a run's thread: ask before
// every command Codex does not consider safe, whether the sandbox is on or not,
// so the judge sees them.
const approvalPolicy = "untrusted"

// sandboxMode is the thread's sandbox: Codex's own (Seatbelt, bubblewrap, its
// Windows sandbox) confining writes to the writable roots, or none at all.
func sandboxMode(sb engines.Sandbox) string {
	if sb.On {
		return "workspace-write"
	}
	return "danger-full-access"
}

// sandboxPolicy is turn/start's sandboxPolicy for the run's settings: the
// work folder and the run's other writable folders as writable roots, and
// the run's internet setting; with the sandbox off, none. /tmp and $TMPDIR
// are not writable by themselves: a home or a folder of the person's could be
// under either (the run's own temporary folder is among its writable ones).
func sandboxPolicy(sb engines.Sandbox) map[string]any {
	if !sb.On {
		return map[string]any{"type": "dangerFullAccess"}
	}
	return map[string]any{"type": "workspaceWrite", "writableRoots": nonNil(sb.Write), "networkAccess": sb.Internet,
		"excludeSlashTmp": true, "excludeTmpdirEnvVar": true}
}

// trustLevel is config.projects[folder].trust_level for the thread: the
// folder's .codex hooks, rules and MCP servers run only in a folder the person
// trusted by name.
func trustLevel(trusted bool) string {
	if trusted {
		return "trusted"
	}
	return "untrusted"
}

// threadConfig is the thread's config overrides (thread/start and
// thread/resume's config: dotted keys, values as in config.toml).
func threadConfig(spec engines.Spec) map[string]any {
	cfg := map[string]any{
		// The whole table, not a dotted key: a folder's path has dots in it.
		"projects": map[string]any{spec.Folder: map[string]any{"trust_level": trustLevel(spec.Trusted)}},
	}
	if m := spec.MCP; m.Command != "" || m.URL != "" {
		name := m.ServerName()
		server := map[string]any{"tool_timeout_sec": mcpToolTimeout}
		if m.Command != "" {
			server["command"] = m.Command
			server["args"] = nonNil(m.Args)
			if len(m.Env) > 0 {
				server["env"] = m.Env
			}
		} else {
			server["url"] = m.URL
			if len(m.Headers) > 0 {
				server["http_headers"] = m.Headers
			}
		}
		cfg["mcp_servers."+name] = server
	}
	if len(spec.CommandEnv) > 0 {
		// Codex's commands inherit its environment without *KEY*/*SECRET*/*TOKEN* names (its
		// default excludes): a run's secrets, and git's GIT_CONFIG_KEY_n, come back through set,
		// which Codex applies after its filters. The table, merged with the person's own policy.
		cfg["shell_environment_policy.set"] = spec.CommandEnv
	}
	if spec.Chat {
		// A chat turn's agent has only the MCP server's tools: Codex's own
		// shell, sub-agents, goals, pictures and web search are turned off.
		for _, f := range []string{"shell_tool", "multi_agent", "goals", "image_generation"} {
			cfg["features."+f] = false
		}
		cfg["web_search"] = "disabled"
	}
	return cfg
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// threadParams are thread/start's params for spec, or thread/resume's when
// spec resumes a thread.
func threadParams(spec engines.Spec) map[string]any {
	p := map[string]any{
		"cwd":            spec.Folder,
		"approvalPolicy": approvalPolicy,
		"sandbox":        sandboxMode(spec.Sandbox),
		"config":         threadConfig(spec),
	}
	if spec.Model != "" {
		p["model"] = spec.Model
	}
	if spec.Resume != "" {
		p["threadId"] = spec.Resume
	}
	if spec.Fast {
		// On the thread, so a resumed thread keeps it; off leaves Codex's own
		// setting (service_tier in config.toml).
		p["serviceTier"] = fastServiceTier
	}
	if spec.Chat {
		// A chat turn (spec 003 §8): Ensemble's instructions in place of
		// Codex's, sent again on resume since a thread need not keep them, and
		// a read-only sandbox; every approval Codex asks for is declined by the
		// host, so only the MCP server's tools act.
		p["baseInstructions"] = spec.System
		p["sandbox"] = "read-only"
	}
	return p
}

// turnParams are turn/start's params: the brief, and the thinking level.
func turnParams(threadID string, spec engines.Spec) map[string]any {
	p := map[string]any{
		"threadId": threadID,
		"input":    []any{map[string]any{"type": "text", "text": spec.Prompt, "text_elements": []any{}}},
	}
	if spec.Effort != "" {
		p["effort"] = spec.Effort
	}
	p["sandboxPolicy"] = sandboxPolicy(spec.Sandbox)
	if spec.Chat {
		p["sandboxPolicy"] = map[string]any{"type": "readOnly"}
	}
	return p
}
