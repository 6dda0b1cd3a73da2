package codex

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
)

var _ engines.Detector = (*Driver)(nil)

// ownProvider finds a model provider of the person's own in config.toml: Codex then needs no
// ChatGPT sign-in.
var ownProvider = regexp.MustCompile(`(?m)^\s*model_provider\s*=\s*["']([^"']+)["']`)

// Detect finds codex, its version (`codex --version`), its models (model/list over `codex
// app-server`) and whether it is signed in (`codex login status`, or a model provider of the
// person's own in config.toml).
func (d *Driver) Detect(ctx context.Context, home string) engines.Detection {
	det := engines.Detection{Name: "codex", Title: "Codex", Login: "codex login", SignedIn: engines.SignInUnknown}
	bin, err := d.binary(home, "")
	if err != nil {
		det.Problem = err.Error()
		return det
	}
	det.Installed, det.Path = true, bin
	det.Sandbox = engines.CheckOf(d.sandbox(ctx))
	if out, _, err := agentproc.Probe(ctx, bin, home, "--version"); err == nil {
		f := strings.Fields(agentproc.FirstLine(out))
		if len(f) > 0 {
			det.Version = f[len(f)-1]
		}
	}
	if cat, err := d.listModels(ctx, bin, home); err == nil {
		det.Catalog, det.Models = cat, modelIDs(cat)
	} else {
		d.log.Debug("codex models not listed", "err", err)
	}
	codexHome := os.Getenv("CODEX_HOME")
	if codexHome == "" {
		codexHome = filepath.Join(home, ".codex")
	}
	if b, err := os.ReadFile(filepath.Join(codexHome, "config.toml")); err == nil {
		if m := ownProvider.FindSubmatch(b); m != nil && string(m[1]) != "openai" {
			det.SignedIn = engines.SignedIn
			return det
		}
	}
	if _, code, err := agentproc.Probe(ctx, bin, home, "login", "status"); err == nil {
		det.SignedIn = engines.SignedIn
		if code != 0 {
			det.SignedIn = engines.SignedOut
			det.Problem = "Codex is not signed in. Open the ChatGPT app (or run `codex login`) and sign in."
		}
	}
	return det
}
