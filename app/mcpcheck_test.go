package app

import "testing"

// TestListState reads the lists of the real clients (Claude Code 2.1.197, Gemini CLI 0.61.0,
// OpenCode 1.18.33, Codex 0.171.0), as they printed them.
func TestListState(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      setupState
		detail    string
	}{
		{"claude connected", "Checking MCP server health…\n\nensemble: /bin/ensemble mcp - ✔ Connected\n", stateConnected, "Connected"},
		{"claude pending", "Checking MCP server health…\n\nensemble: /bin/ensemble mcp - ⏸ Pending approval (run `claude` to approve)\n\n" +
			"MCP config diagnostics ⚠\n\n[Contains warnings] Project config (shared via .mcp.json)\nLocation: /p/.mcp.json\n" +
			" └ [Warning] [ensemble] mcpServers.ensemble: Missing environment variables: ENSEMBLE_KEY\n", statePending, "Pending approval"},
		{"claude failed", "ensemble: /bin/true mcp - ✗ Failed to connect\n", stateFailed, "✗ Failed to connect"},
		{"claude other server", "github: npx gh - ✔ Connected\nensemble-old: x - ✔ Connected\n", stateMissing, ""},
		{"gemini untrusted", "Warning: MCP servers are configured but disabled because this folder is untrusted.\n\nConfigured MCP servers:\n\n" +
			"○ ensemble: /bin/ensemble mcp (stdio) - Disabled\n", stateDisabled, "Disabled"},
		{"gemini connected", "Configured MCP servers:\n\n✓ ensemble: /bin/ensemble mcp (stdio) - Connected\n", stateConnected, "Connected"},
		{"gemini disconnected", "Configured MCP servers:\n\n✗ ensemble: /bin/true mcp (stdio) - Disconnected\n", stateFailed, "Disconnected"},
		{"gemini none", "No MCP servers configured.\n", stateMissing, ""},
		{"opencode connected", "┌  MCP Servers\n│\n●  ✓ ensemble connected\n│      /bin/ensemble mcp\n│\n└  1 server(s)\n", stateConnected, "Connected"},
		{"opencode failed", "┌  MCP Servers\n│\n●  ✗ ensemble failed\n│      MCP error -32000: Connection closed\n│      /bin/true mcp\n│\n└  1 server(s)\n",
			stateFailed, "failed: MCP error -32000: Connection closed"},
	} {
		got, detail := listState(stripANSI(tc.out))
		if got != tc.want || detail != tc.detail {
			t.Errorf("%s: got %d %q, want %d %q", tc.name, got, detail, tc.want, tc.detail)
		}
	}
	if got, _ := listState(stripANSI("●  \x1b[32m✓\x1b[0m ensemble \x1b[90mconnected\x1b[0m\n")); got != stateConnected {
		t.Errorf("colours: %d", got)
	}
	for out, want := range map[string]setupState{
		`[{"name":"ensemble","enabled":true,"disabled_reason":null}]`:                  stateEnabled,
		`[{"name":"ensemble","enabled":false,"disabled_reason":"disabled in config"}]`: stateDisabled,
		`[{"name":"other","enabled":true}]`:                                            stateMissing,
		`[]`:                                                                           stateMissing,
	} {
		if got, _ := codexListState(out); got != want {
			t.Errorf("codex %s: got %d, want %d", out, got, want)
		}
	}
	// Codex does not start the server to list it; a command that is not there is found anyway.
	for cmd, want := range map[string]setupState{"/nowhere/ensemble": stateFailed, "/bin/sh": stateEnabled} {
		if got, _ := codexListState(`[{"name":"ensemble","enabled":true,"transport":{"command":"` + cmd + `"}}]`); got != want {
			t.Errorf("codex with command %s: got %d, want %d", cmd, got, want)
		}
	}
}
