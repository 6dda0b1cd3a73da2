package codex

import (
	"os"
	"path/filepath"
	"runtime"

	"github.com/ensemblework/ensemble/engines/agentproc"
)

// installHint is the sentence a person gets when codex is missing.
const installHint = "Codex (codex) was not found on your PATH, in the usual install folders or in the ChatGPT app; install it with `npm install -g @openai/codex` (or the ChatGPT app), run `codex login` once to sign in, and try again"

// signInHint is the sentence a person gets when Codex has no sign-in.
const signInHint = "Open the ChatGPT app (or run codex login) and sign in"

// appCopies are where the ChatGPT app keeps its own codex, which shares the
// ~/.codex sign-in (spec 003 §2).
func appCopies() []string {
	switch runtime.GOOS {
	case "darwin":
		return []string{"/Applications/ChatGPT.app/Contents/Resources/codex-cli/bin/codex"}
	case "windows":
		if d := os.Getenv("LOCALAPPDATA"); d != "" {
			return []string{filepath.Join(d, "OpenAI", "Codex", "bin", "codex.exe")}
		}
		return nil
	default:
		return []string{"/usr/lib/chatgpt/resources/codex"}
	}
}

// Find returns the codex binary on the trusted path ([agentproc.TrustedPath]:
// the login shell's PATH, this process's PATH and the usual install folders,
// never inside the work folder), else the ChatGPT app's copy, or an error
// wrapping [engines.ErrNotInstalled] that says how to install it.
func Find(home, folder string) (string, error) {
	return agentproc.Find(home, folder, []string{"codex"}, appCopies(), installHint)
}
