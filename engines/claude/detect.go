package claude

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
)

var _ engines.Detector = (*Driver)(nil)

// Detect finds claude, its version (`claude --version`), whether it is signed in
// (`claude auth status --json`: a key in the person's own settings counts) and
// its models, from Ensemble's own table (models.go).
func (d *Driver) Detect(ctx context.Context, home string) engines.Detection {
	det := engines.Detection{Name: "claude", Title: "Claude Code", Login: "claude", SignedIn: engines.SignInUnknown}
	bin, err := d.binary(home, "")
	if err != nil {
		det.Problem = err.Error()
		return det
	}
	det.Installed, det.Path = true, bin
	det.Sandbox = engines.CheckOf(d.sandbox(ctx))
	det.Catalog, det.Models = catalog()
	if out, _, err := agentproc.Probe(ctx, bin, home, "--version"); err == nil {
		det.Version, _, _ = strings.Cut(agentproc.FirstLine(out), " ")
	}
	out, _, err := agentproc.Probe(ctx, bin, home, "auth", "status", "--json")
	var st struct {
		LoggedIn *bool `json:"loggedIn"`
	}
	if err == nil && json.Unmarshal([]byte(out), &st) == nil && st.LoggedIn != nil {
		det.SignedIn = engines.SignedOut
		if *st.LoggedIn {
			det.SignedIn = engines.SignedIn
		} else {
			det.Problem = "Claude Code is not signed in. Run `claude` in a terminal and sign in (or set a key in ~/.claude/settings.json)."
		}
	}
	return det
}
