//go:build linux

package claude

import (
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// testModelChoices: the long window reaches the real claude as its model's
// "[1m]" name, and fast mode as its fastMode setting; each shows in the beta
// Claude Code asks the API for.
func testModelChoices(t *testing.T, bin string) {
	for _, c := range []struct {
		name      string
		spec      func(engines.Spec) engines.Spec
		wantModel string
		wantBeta  string
	}{
		{"long window", func(s engines.Spec) engines.Spec {
			s.Model, s.Context = "claude-sonnet-4-6", engines.ContextLong
			return s
		}, "claude-sonnet-4-6[1m]", "context-1m-"},
		{"fast mode", func(s engines.Spec) engines.Spec {
			s.Model, s.Fast = "claude-opus-4-8", true
			return s
		}, "claude-opus-4-8", "fast-mode-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newE2E(t, bin)
			e.server.Script(enginetest.Say("Hi."))
			if _, err := e.run(c.spec(e.spec("say hi"))); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			started := e.host.EventsOf(engines.EventStarted)
			if len(started) == 0 || started[0].Model != c.wantModel {
				t.Errorf("started %+v, want model %s", started, c.wantModel)
			}
			asked := false
			for _, r := range e.server.Requests() {
				if r.Model != "" && strings.Contains(strings.Join(r.Header.Values("anthropic-beta"), ","), c.wantBeta) {
					asked = true
				}
			}
			if !asked {
				t.Errorf("no model request with the %s… beta", c.wantBeta)
			}
		})
	}
}
