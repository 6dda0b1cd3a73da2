package acp

import (
	"encoding/json"
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
		{engines.Spec{Chat: true}, `{"*":"deny","ensemble_*":"allow"}`},
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
