package app

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/secrets"
)

// gitHelperTimeout bounds one question to the runtime: git waits on the helper.
const gitHelperTimeout = 30 * time.Second

// newGitCredentialCmd is git's credential helper in a run (spec 002 §8.7.5): git runs it as
// `ensemble git-credential --url … --token … get` with its request on standard input. It is
// hidden: only git calls it, from the settings a run is given (gitHelperFor).
func newGitCredentialCmd() *cobra.Command {
	var url, token string
	cmd := &cobra.Command{
		Use:    "git-credential get|store|erase",
		Short:  "Git's credential helper inside a run: asks this computer's Ensemble for a saved secret",
		Hidden: true,
		Args:   usageArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "get" {
				return nil // Ensemble keeps the secret; git stores and erases nothing here
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), gitHelperTimeout)
			defer cancel()
			return secrets.AskGitHelper(ctx, &http.Client{Timeout: gitHelperTimeout}, url, token, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "the runtime's git-credential route, on loopback")
	cmd.Flags().StringVar(&token, "token", "", "the run's own git token")
	return cmd
}

// gitHelperFor is credential.helper for a run with token: this program, asking the runtime at
// runtimeURL. git runs it through the shell, so the path is quoted.
func gitHelperFor(exe, runtimeURL string) func(token string) string {
	return func(token string) string {
		return "!" + shellQuote(exe) + " git-credential --url " + shellQuote(runtimeURL+"/api/engine/git-credential") + " --token " + token
	}
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// runGitHelper is the runs' git helper from this very program, or nil (git gets no helper) when
// it cannot say where it is.
func runGitHelper(runtimeURL string) func(string) string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return gitHelperFor(exe, runtimeURL)
}
