package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ensemblework/ensemble/engines"
)

// A run keeps OpenCode's tools, asking before those that act; a chat turn denies them all but the
// run's MCP server's, and the last rule that matches wins in OpenCode, so the allow comes last.
func TestOpencodeRules(t *testing.T) {
	p, _ := ProfileNamed("opencode")
	for _, c := range []struct {
		spec engines.Spec
		want string
	}{
		{engines.Spec{}, opencodePermission},
		{engines.Spec{Chat: true}, `{"*":"deny","ensemble_run_*":"allow"}`},
		{engines.Spec{Chat: true, MCP: engines.MCPServer{Name: "hub"}}, `{"*":"deny","hub_*":"allow"}`},
	} {
		env := p.Env(c.spec)
		if got := env["OPENCODE_PERMISSION"]; got != c.want || env["OPENCODE_CONFIG_CONTENT"] != `{"permission":`+c.want+`}` {
			t.Errorf("%+v: %q, %q; want %q", c.spec, got, env["OPENCODE_CONFIG_CONTENT"], c.want)
		}
		if !json.Valid([]byte(env["OPENCODE_CONFIG_CONTENT"])) {
			t.Errorf("%+v: the config is not JSON", c.spec)
		}
	}
}

// A chat turn keeps Gemini CLI to the run's MCP server and gives it a policy that denies Gemini's
// own tools and allows MCP ones; a run's command line has neither.
func TestGeminiChatArgs(t *testing.T) {
	p, _ := ProfileNamed("gemini")
	if a := p.Args(engines.Spec{}, ""); slices.Contains(a, "--admin-policy") || slices.Contains(a, "--allowed-mcp-server-names") {
		t.Errorf("a run is limited like a chat: %q", a)
	}
	dir := t.TempDir()
	a, err := p.ChatArgs(engines.Spec{Chat: true, MCP: engines.MCPServer{Name: "hub"}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "chat-policy.toml")
	if want := []string{"--admin-policy", policy, "--allowed-mcp-server-names", "hub"}; !slices.Equal(a, want) {
		t.Errorf("chat args %q, want %q", a, want)
	}
	if b, err := os.ReadFile(policy); err != nil || string(b) != geminiChatPolicy {
		t.Errorf("the policy file holds %q (%v)", b, err)
	}
}
