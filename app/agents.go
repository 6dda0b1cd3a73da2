package app

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/engines"
)

func newAgentsCmd(g *globals) *cobra.Command {
	var refresh, asJSON bool
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List the coding agents this computer has, their versions and sign-in",
		Long: `List the coding agents Ensemble can drive and what it found of each on this computer: whether
the CLI is installed (on your login shell's PATH or the usual install folders, never a project
folder), its version, whether it is signed in, with the command that signs it in, and whether
its runs can be sandboxed here: by the agent's own OS sandbox, by Ensemble's (bubblewrap on
Linux, Seatbelt on macOS) for an agent without one, or not at all, with what to install.
Ensemble checks every 10 minutes; --refresh checks now.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			path := "/api/agents"
			if refresh {
				path += "?refresh=1"
			}
			var list struct {
				Agents []engines.Detection `json:"agents"`
			}
			if err := c.do(cmd.Context(), "GET", path, nil, &list); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				e := json.NewEncoder(out)
				e.SetIndent("", "  ")
				return e.Encode(list.Agents)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "AGENT\tINSTALLED\tVERSION\tSIGNED IN\tSANDBOX\tSIGN IN WITH")
			var problems []string
			for _, a := range list.Agents {
				if a.Installed && a.Problem != "" {
					problems = append(problems, a.Name+": "+a.Problem)
				}
				if a.Installed && a.Sandbox != nil && !a.Sandbox.OK {
					problems = append(problems, a.Name+": "+a.Sandbox.Problem)
				}
				installed, version, signed := "no", a.Version, signInWord(a.SignedIn)
				if a.Installed {
					installed = "yes"
				} else {
					signed = "-"
				}
				if version == "" {
					version = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, installed, version, signed, sandboxWord(a), a.Login)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, p := range problems {
				fmt.Fprintln(out, p)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&refresh, "refresh", false, "check every agent again now")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the agents as JSON")
	return cmd
}

// sandboxWord says what would confine the agent's runs with the sandbox on.
func sandboxWord(a engines.Detection) string {
	switch c := a.Sandbox; {
	case !a.Installed || c == nil:
		return "-"
	case !c.OK:
		return "no (below)"
	case c.Whole:
		return "Ensemble's"
	}
	return "its own"
}

func signInWord(s engines.SignIn) string {
	switch s {
	case engines.SignedIn:
		return "yes"
	case engines.SignedOut:
		return "no"
	}
	return "on first use"
}
