package app

import (
	"fmt"
	"net/url"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/computer"
)

func newNodesAnswersCmd(g *globals) *cobra.Command {
	var revoke string
	cmd := &cobra.Command{
		Use:   "answers HANDLE [--revoke ID]",
		Short: "List the folders and addresses you let a node use on this computer, or take one back",
		Long: `A node's computer card (a command in another folder, a file there, a local address) takes
Once, This mission or Always. This lists what is kept (This mission, for the plan or conversation
it was given in, and Always), newest first; --revoke takes one back, so the node's next call there
asks again.`,
		Example: `  ensemble nodes answers @ada
  ensemble nodes answers ada --revoke cka_1a2b3c4d5e6f7a8b`,
		Args: usageArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			n, err := getNode(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			base := "/api/node/nodes/" + url.PathEscape(n.ID) + "/computer-answers"
			if revoke != "" {
				if err := c.do(cmd.Context(), "DELETE", base+"/"+url.PathEscape(revoke), nil, nil); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Taken back: @%s asks again the next time it needs that.\n", n.Slug)
				return nil
			}
			var out struct {
				Answers []computer.Answer `json:"answers"`
			}
			if err := c.do(cmd.Context(), "GET", base, nil, &out); err != nil {
				return err
			}
			if len(out.Answers) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "@%s has no answers kept: each new folder or address asks on a card.\n", n.Slug)
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tKEPT\tFOR\tSINCE")
			for _, a := range out.Answers {
				fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\n", a.ID, a.Keep, a.Scope.Kind, a.Scope.Value, a.CreatedAt.Local().Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&revoke, "revoke", "", "the id of the answer to take back")
	return cmd
}
