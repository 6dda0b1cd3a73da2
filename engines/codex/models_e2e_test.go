//go:build linux

package codex

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestRealCodexModels lists the real codex's models (its bundled catalog,
// offline) over app-server, as detection does.
func TestRealCodexModels(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Codex; not in -short")
	}
	bin := enginetest.InstallNPM(t, codexPackage, codexVersion, "codex")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	root := t.TempDir()
	codexHome, tmp := filepath.Join(root, "codex-home"), filepath.Join(root, "tmp")
	for _, d := range []string{codexHome, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	d := New(WithBinary(bin), WithLogger(testLogger(t)))
	d.environ = func() []string {
		return append(os.Environ(), "CODEX_HOME="+codexHome, "TMPDIR="+tmp, "CODEX_DISABLE_UPDATE_NOTICE=1")
	}
	cat, err := d.listModels(context.Background(), bin, root)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(cat, func(m engines.ModelInfo) bool { return m.ID == codexModel })
	if i < 0 {
		t.Fatalf("%s not listed: %+v", codexModel, cat)
	}
	if m := cat[i]; !m.Fast || len(m.Efforts) == 0 || !slices.Contains(m.Efforts, m.DefaultEffort) {
		t.Errorf("%s: %+v", codexModel, m)
	}
	if !slices.ContainsFunc(cat, func(m engines.ModelInfo) bool { return m.Default }) {
		t.Error("no default model")
	}
}

// testFastTier: fast mode reaches the model as the fast service tier.
func testFastTier(t *testing.T, bin string) {
	e := newE2E(t, bin)
	e.server.Script(enginetest.Say("Hi."))
	spec := e.spec("say hi")
	spec.Fast = true
	if _, err := e.run(spec); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	e.noErrorEvents()
	var tiers []string
	for _, r := range e.server.Requests() {
		var body struct {
			ServiceTier string `json:"service_tier"`
		}
		if r.API == enginetest.Responses && json.Unmarshal(r.Body, &body) == nil {
			tiers = append(tiers, body.ServiceTier)
		}
	}
	if len(tiers) == 0 || !slices.Contains(tiers, fastServiceTier) {
		t.Errorf("service tiers asked for: %q, want %q", tiers, fastServiceTier)
	}
}
