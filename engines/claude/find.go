package claude

import "github.com/ensemblework/ensemble/engines/agentproc"

// installHint is the sentence a person gets when claude is missing.
const installHint = "Claude Code (claude) was not found on your PATH or in the usual install folders; install it with `npm install -g @anthropic-ai/claude-code` (or Anthropic's installer, https://docs.claude.com/en/docs/claude-code/setup), run `claude` once to sign in, and try again"

// Find returns the claude binary on the trusted path (see
// [agentproc.TrustedPath]), or an error wrapping [engines.ErrNotInstalled]
// that says how to install it.
func Find(home, folder string) (string, error) {
	return agentproc.Find(home, folder, []string{"claude"}, nil, installHint)
}
