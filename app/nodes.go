package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/node"
)

func newNodesCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "List, make, pause and delete your nodes (your AI teammates)",
		Long: `Nodes are your lasting AI teammates: each has a name, a @handle, a role, a charter and
its own memory, and a DM where you talk to it (` + "`ensemble dm`" + `). They are kept in the
running runtime, found through api.json in the data folder.

  list     every node: handle, name, role and status
  create   a node from a template (--template) or a name (--name), with --handle and --role
  show     one node (by @handle or id): its settings, its rooms and its memory
  pause    stop what a node is doing; it answers nothing until resumed
  resume   let a paused node answer again
  delete   a node with its DM, its turns and its memory (a crew it is in stays)
  card     answer a node's card: approve or discard
  answers  the folders and addresses you let a node use on this computer; --revoke one`,
		Example: `  ensemble nodes list
  ensemble nodes create --name Ada --handle ada --role researcher
  ensemble nodes show @ada
  ensemble nodes pause ada
  ensemble nodes delete ada`,
		Args: func(cmd *cobra.Command, args []string) error { return groupRun(cmd, args) },
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newNodesListCmd(g), newNodesCreateCmd(g), newNodesShowCmd(g),
		newNodesStatusCmd(g, "pause", node.StatusPaused), newNodesStatusCmd(g, "resume", node.StatusActive),
		newNodesDeleteCmd(g), newNodesCardCmd(g), newNodesAnswersCmd(g))
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}

func newNodesListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List your nodes: handle, name, role and status",
		Long:  `List your nodes, oldest first, one a line: @handle, name, role and status (active or paused).`,
		Args:  usageArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var list struct {
				Nodes []node.Node `json:"nodes"`
			}
			if err := c.do(cmd.Context(), "GET", "/api/node/nodes", nil, &list); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(list.Nodes) == 0 {
				fmt.Fprintln(out, "You have no nodes yet; make one with `ensemble nodes create --name NAME`.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "HANDLE\tNAME\tROLE\tSTATUS")
			for _, n := range list.Nodes {
				fmt.Fprintf(tw, "@%s\t%s\t%s\t%s\n", n.Slug, n.Name, n.Role, n.Status)
			}
			return tw.Flush()
		},
	}
}

func newNodesCreateCmd(g *globals) *cobra.Command {
	var in node.NewNode
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Make a node from a template or a name",
		Long: `Make a node, with its own DM. Give a template (--template, the template's id), a name
(--name), or both: the template gives the role, charter and look, the name replaces its
own. --handle is how you @mention it (lowercase letters, digits, - and _; made from the
name when not given); --role is a word for what it does (assistant when not given).
--provider and --model choose its model; without them it answers with the assistant's.`,
		Example: `  ensemble nodes create --name Ada --handle ada --role researcher
  ensemble nodes create --template researcher`,
		Args: usageArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if in.TemplateID == "" && strings.TrimSpace(in.Name) == "" {
				return errors.New("Give the node a --name, or a --template to make it from.")
			}
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var n node.Node
			if err := c.do(cmd.Context(), "POST", "/api/node/nodes", in, &n); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Made %s (@%s, %s). Talk to it with `ensemble dm %s \"…\"`.\n", n.Name, n.Slug, n.Role, n.Slug)
			return nil
		},
	}
	cmd.Flags().StringVar(&in.TemplateID, "template", "", "the template to make it from (its id)")
	cmd.Flags().StringVar(&in.Name, "name", "", "its name (the template's when not given)")
	cmd.Flags().StringVar(&in.Slug, "handle", "", "its @handle (made from the name when not given)")
	cmd.Flags().StringVar(&in.Role, "role", "", "its role, a word for what it does")
	cmd.Flags().StringVar(&in.Provider, "provider", "", "the provider of its model (the assistant's when not given)")
	cmd.Flags().StringVar(&in.Model, "model", "", "its model (the assistant's when not given)")
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}

func newNodesShowCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "show HANDLE",
		Short: "Show one node, its rooms and its memory",
		Long:  `Show one node (by @handle or id): its name, role, status and model, the rooms it is in (its DM and its crews), and what it keeps in memory, newest first.`,
		Args:  usageArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			n, err := getNode(ctx, c, args[0])
			if err != nil {
				return err
			}
			var rooms struct {
				Rooms []node.Room `json:"rooms"`
			}
			if err := c.do(ctx, "GET", "/api/node/rooms", nil, &rooms); err != nil {
				return err
			}
			var mem struct {
				Memories []node.Memory `json:"memories"`
			}
			if err := c.do(ctx, "GET", "/api/node/nodes/"+url.PathEscape(n.ID)+"/memory", nil, &mem); err != nil {
				return err
			}
			printNode(cmd.OutOrStdout(), n, rooms.Rooms, mem.Memories)
			return nil
		},
	}
}

// printNode writes a node, the rooms it is in and its memory.
func printNode(w io.Writer, n node.Node, rooms []node.Room, mem []node.Memory) {
	fmt.Fprintf(w, "%s (@%s)  %s\n", n.Name, n.Slug, n.ID)
	fmt.Fprintf(w, "  Role: %s\n  Status: %s\n", n.Role, n.Status)
	model := "the assistant's (Settings → Assistant)"
	if n.Model != "" {
		model = strings.TrimSpace(n.Provider + " " + n.Model)
	}
	fmt.Fprintf(w, "  Model: %s\n", model)
	if n.TemplateID != "" {
		fmt.Fprintf(w, "  Template: %s\n", n.TemplateID)
	}
	fmt.Fprintln(w, "Rooms:")
	for _, r := range rooms {
		in := r.DMNodeID == n.ID
		for _, m := range r.Members {
			in = in || m.NodeID == n.ID
		}
		if !in {
			continue
		}
		what := string(r.Kind)
		if r.Kind == node.RoomDM {
			what = "DM"
		} else if r.Lead == n.ID {
			what += ", lead"
		}
		fmt.Fprintf(w, "  %s  %s (%s)\n", r.ID, r.Title, what)
	}
	if len(mem) == 0 {
		fmt.Fprintln(w, "Memory: nothing yet.")
		return
	}
	fmt.Fprintln(w, "Memory:")
	for _, m := range mem {
		fmt.Fprintf(w, "  - %s\n", strings.ReplaceAll(m.Content, "\n", " "))
	}
}

func getNode(ctx context.Context, c *client, ref string) (node.Node, error) {
	var n node.Node
	err := c.do(ctx, "GET", "/api/node/nodes/"+url.PathEscape(strings.TrimPrefix(ref, "@")), nil, &n)
	return n, err
}

// newNodesStatusCmd is pause (status paused) or resume (status active).
func newNodesStatusCmd(g *globals, verb, status string) *cobra.Command {
	short, long := "Pause a node: stop what it is doing", `Pause a node (by @handle or id): what it is doing stops and its queued turns are dropped;
it answers nothing until resumed. Its DM says what pausing stopped.`
	done := "Paused"
	if status == node.StatusActive {
		short, long = "Resume a paused node", `Resume a paused node (by @handle or id): it answers messages again.`
		done = "Resumed"
	}
	return &cobra.Command{
		Use:   verb + " HANDLE",
		Short: short,
		Long:  long,
		Args:  usageArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var n node.Node
			path := "/api/node/nodes/" + url.PathEscape(strings.TrimPrefix(args[0], "@"))
			if err := c.do(cmd.Context(), "PATCH", path, node.NodeChange{Status: &status}, &n); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s (@%s).\n", done, n.Name, n.Slug)
			return nil
		},
	}
}

func newNodesDeleteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete HANDLE",
		Short: "Delete a node with its DM and memory",
		Long: `Delete a node (by @handle or id) with its DM, its turns, its conversations and its
memory. The crews it was in stay, without it. This cannot be undone.`,
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
			if err := c.do(cmd.Context(), "DELETE", "/api/node/nodes/"+url.PathEscape(n.ID), nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted %s (@%s) with its DM and memory.\n", n.Name, n.Slug)
			return nil
		},
	}
}

func newNodesCardCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "card ID approve|discard|once|mission|always",
		Short: "Answer a node's card",
		Long: `Answer a card a node put in a chat (what ` + "`ensemble dm`" + ` prints with its id): approve does
what it holds, discard drops it. A computer card (a command in another folder, a local address)
also takes once, mission (for the plan or conversation it came from) or always; approve is once.
A card is answered once; a second answer says how it was settled. A sudo card's password and a
secret card's value are typed on the card in the window or on the phone, never here.`,
		Example: `  ensemble nodes card msg_0123456789abcdef approve
  ensemble nodes card msg_0123456789abcdef always`,
		Args: usageArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[1] {
			case node.Approve, node.Discard, node.DecideOnce, node.DecideMission, node.DecideAlways:
			default:
				return fmt.Errorf("Answer a card with approve or discard (once, mission or always for a computer card), not %q.", args[1])
			}
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			m, err := answerCard(cmd.Context(), c, args[0], args[1])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), cardOutcome(m))
			return nil
		},
	}
}
