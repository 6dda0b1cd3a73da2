package app

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"

	"github.com/spf13/cobra"
)

func newOpenCmd(g *globals) *cobra.Command {
	var printOnly bool
	cmd := &cobra.Command{
		Use:   "open",
		Short: "Open the web UI in a browser, signed in",
		Long: `Ask the running runtime for a one-time sign-in link and open it in the default browser.
The link works once, within 5 minutes. With --print the link is only printed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var link struct {
				URL string `json:"url"`
			}
			if err := c.do(cmd.Context(), "POST", "/api/signin-links", nil, &link); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), link.URL)
			if printOnly {
				return nil
			}
			if err := openBrowser(cmd.Context(), link.URL); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "Could not open a browser (%v); open the link above yourself.\n", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&printOnly, "print", false, "only print the link")
	return cmd
}

func openBrowser(ctx context.Context, url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.CommandContext(ctx, "open", url)
	case "windows":
		cmd = exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.CommandContext(ctx, "xdg-open", url)
	}
	return cmd.Start()
}
