package claude

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ensemblework/ensemble/engines"
)

// settingSources is which of Claude Code's settings load: the folder's own
// (.claude/settings*.json, its hooks) only in a folder the person trusted by
// name; the person's own user settings always, since that is where Claude
// Code may keep how it signs in (spec 003 §1).
func settingSources(trusted bool) string {
	if trusted {
		return "user,project,local"
	}
	return "user"
}

// runFiles writes the per-run settings and MCP config into dir, and a chat
// turn's instructions.
func runFiles(dir string, spec engines.Spec) (settings, mcp string, err error) {
	if spec.Chat {
		if err := os.WriteFile(filepath.Join(dir, "system.md"), []byte(spec.System), 0o600); err != nil {
			return "", "", fmt.Errorf("claude: write the instructions: %w", err)
		}
	}
	settings = filepath.Join(dir, "settings.json")
	mcp = filepath.Join(dir, "mcp.json")
	s := map[string]any{
		// Asked before every call through can_use_tool; nothing here widens it.
		"permissions": map[string]any{"defaultMode": "default"},
		"env":         map[string]string{"MCP_TOOL_TIMEOUT": mcpToolTimeout},
	}
	// Given on the command line, this wins over the person's own sandbox settings: off is off.
	s["sandbox"] = sandboxSettings(spec.Sandbox)
	if spec.Fast {
		// Settings given with --settings count as the command line's own, so
		// this holds even where fast mode is opted into per session.
		s["fastMode"] = true
	}
	if err := writeJSON(settings, s); err != nil {
		return "", "", err
	}
	servers := map[string]any{}
	if m := spec.MCP; m.Command != "" || m.URL != "" {
		name := m.ServerName()
		if m.Command != "" {
			servers[name] = map[string]any{"type": "stdio", "command": m.Command, "args": nonNil(m.Args), "env": nonNilMap(m.Env)}
		} else {
			servers[name] = map[string]any{"type": "http", "url": m.URL, "headers": nonNilMap(m.Headers)}
		}
	}
	if err := writeJSON(mcp, map[string]any{"mcpServers": servers}); err != nil {
		return "", "", err
	}
	return settings, mcp, nil
}

// sandboxSettings turn on Claude Code's own sandbox (sandbox-runtime: bubblewrap and socat on
// Linux, Seatbelt on macOS) around its shell commands with the run's paths (spec 003 §1). It fails
// to start rather than run unsandboxed; it asks before every command, sandboxed or not, since the
// judge decides each; and a command it stopped may be retried outside it only through the judge,
// which puts that to the person. Internet off is an empty list of domains; on, no list at all, so
// nothing is filtered.
func sandboxSettings(sb engines.Sandbox) map[string]any {
	if !sb.On {
		return map[string]any{"enabled": false}
	}
	fs := map[string]any{"allowWrite": nonNil(sb.Write), "denyWrite": nonNil(sb.DenyWrite),
		"denyRead": nonNil(sb.DenyRead), "allowRead": nonNil(sb.AllowRead)}
	s := map[string]any{
		"enabled":                  true,
		"failIfUnavailable":        true,
		"autoAllowBashIfSandboxed": false,
		"allowUnsandboxedCommands": true,
		"filesystem":               fs,
	}
	if !sb.Internet {
		s["network"] = map[string]any{"allowedDomains": []string{}}
	}
	return s
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("claude: write %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("claude: write %s: %w", filepath.Base(path), err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// args is claude's command line for spec in machine mode.
func args(spec engines.Spec, settings, mcp string) []string {
	a := []string{
		"-p",
		"--input-format", "stream-json",
		"--output-format", "stream-json",
		"--verbose",
		"--permission-mode", "default",
		"--permission-prompt-tool", "stdio", // not in --help, but what turns on can_use_tool
		"--setting-sources", settingSources(spec.Trusted),
		"--settings", settings,
		"--mcp-config", mcp,
	}
	if spec.Chat {
		a = append(a, chatArgs(spec, filepath.Join(filepath.Dir(settings), "system.md"))...)
	}
	if spec.MaxTurns > 0 {
		a = append(a, "--max-turns", strconv.Itoa(spec.MaxTurns))
	}
	if m := modelArg(spec); m != "" {
		a = append(a, "--model", m)
	}
	if spec.Effort != "" {
		a = append(a, "--effort", spec.Effort)
	}
	if spec.Resume != "" {
		a = append(a, "--resume", spec.Resume)
	}
	return a
}

// userMessage is the brief as the first stream-json user message.
func userMessage(text string) map[string]any {
	return map[string]any{
		"type":               "user",
		"session_id":         "",
		"parent_tool_use_id": nil,
		"message": map[string]any{
			"role":    "user",
			"content": []any{map[string]any{"type": "text", "text": text}},
		},
	}
}

// chatArgs make a run a chat turn (spec 003 §8): Ensemble's instructions in
// place of Claude Code's, none of its own tools and no MCP servers but the
// turn's, whose tools need no asking, and the text as it streams.
func chatArgs(spec engines.Spec, system string) []string {
	name := spec.MCP.ServerName()
	return []string{
		"--system-prompt-file", system,
		"--tools", "",
		"--strict-mcp-config",
		"--allowedTools", "mcp__" + name,
		"--include-partial-messages",
	}
}
