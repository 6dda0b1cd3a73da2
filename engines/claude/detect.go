package claude

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
)

var _ engines.Detector = (*Driver)(nil)

// Detect finds claude, its version (`claude --version`), whether it is signed in
// (`claude auth status --json`: a key in the person's own settings counts) and
// its models, from Ensemble's own table (models.go). claude is asked with the
// environment a run gets, so a key variable runs go without (spec 003 §6) does
// not count as signed in here either.
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
	base := d.environ()
	env := agentEnv(base, home, "", nil)
	if out, _, err := agentproc.ProbeEnv(ctx, env, bin, "--version"); err == nil {
		det.Version, _, _ = strings.Cut(agentproc.FirstLine(out), " ")
	}
	out, _, err := agentproc.ProbeEnv(ctx, env, bin, "auth", "status", "--json")
	var st struct {
		LoggedIn *bool `json:"loggedIn"`
	}
	if err == nil && json.Unmarshal([]byte(out), &st) == nil && st.LoggedIn != nil {
		det.SignedIn = engines.SignedOut
		if *st.LoggedIn {
			det.SignedIn = engines.SignedIn
		} else {
			det.Problem = signedOutProblem(base)
		}
	}
	return det
}

// signInHow says how to sign Claude Code in for Ensemble's runs.
const signInHow = "Run `claude` in a terminal and sign in with /login, or give Claude Code the key itself in " +
	"~/.claude/settings.json: \"env\": {\"ANTHROPIC_API_KEY\": \"sk-ant-…\"}, or \"apiKeyHelper\": a command that prints the key."

// signedOutProblem says how to sign Claude Code in for Ensemble's runs, naming a key variable in
// Ensemble's own environment that runs leave out.
func signedOutProblem(env []string) string {
	if k := droppedKey(env); k != "" {
		return "Claude Code is not signed in for Ensemble's runs: they go without " + k +
			" from Ensemble's environment, which would bill an API account instead of your plan. " + signInHow
	}
	return "Claude Code is not signed in. " + signInHow
}

// droppedKey is the first key variable set in env that runs go without, or "".
func droppedKey(env []string) string {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if slices.Contains(keyVariables, k) && v != "" {
			return k
		}
	}
	return ""
}
