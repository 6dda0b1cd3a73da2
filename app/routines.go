package app

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/node"
)

func newRoutinesCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "routines",
		Short: "List, make, run and delete your nodes' routines",
		Long: `A routine is work a node does by itself: on a schedule (five-field cron, in a time zone),
when tasks or pages change, or when a webhook calls. Its result is posted in the node's DM
(or a crew it is in) as --notify says. A time missed while Ensemble was not running is
recorded as missed, not run late.

  list     every routine (or one node's, with --node): trigger, next time, last run
  create   a routine for a node: --node, --instruction and --cron, --on or --webhook
  run      run a routine now
  delete   a routine with its history`,
		Example: `  ensemble routines create --node ada --instruction "Summarise my open tasks." --cron "0 9 * * 1-5"
  ensemble routines create --node ada --instruction "Triage the new issue." --webhook
  ensemble routines list
  ensemble routines run rtn_0123456789abcdef`,
		Args: func(cmd *cobra.Command, args []string) error { return groupRun(cmd, args) },
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRoutinesListCmd(g), newRoutinesCreateCmd(g), newRoutinesRunCmd(g), newRoutinesDeleteCmd(g))
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}

func newRoutinesListCmd(g *globals) *cobra.Command {
	var nodeRef string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List routines: id, node, trigger, status, next time and last run",
		Args:  usageArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var list struct {
				Routines []node.Routine `json:"routines"`
			}
			path := "/api/node/routines"
			if nodeRef != "" {
				path += "?nodeId=" + url.QueryEscape(strings.TrimPrefix(nodeRef, "@"))
			}
			if err := c.do(cmd.Context(), "GET", path, nil, &list); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(list.Routines) == 0 {
				fmt.Fprintln(out, "There are no routines yet; make one with `ensemble routines create`.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTITLE\tTRIGGER\tSTATUS\tNEXT\tLAST RUN")
			for _, r := range list.Routines {
				next, last := "-", "-"
				if r.NextAt != nil {
					next = r.NextAt.Local().Format(time.DateTime)
				}
				if len(r.LastRuns) > 0 {
					last = r.LastRuns[0].Status + " " + r.LastRuns[0].DueAt.Local().Format(time.DateTime)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Title, triggerLine(r.Trigger), r.Status, next, last)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&nodeRef, "node", "", "only this node's routines (@handle or id)")
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}

func triggerLine(t node.Trigger) string {
	switch t.Kind {
	case node.TriggerSchedule:
		return fmt.Sprintf("cron %q %s", t.Cron, t.Timezone)
	case node.TriggerEvent:
		return fmt.Sprintf("on %s changes (%ds)", t.On, t.WindowSeconds)
	}
	return t.Kind
}

func newRoutinesCreateCmd(g *globals) *cobra.Command {
	var in node.NewRoutine
	var webhook bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Make a routine for a node",
		Long: `Make a routine for a node (--node, its @handle or id): --instruction is what it does each
time, and one trigger: --cron (five fields, in --timezone, this computer's by default), --on
task|page (changes within --window seconds are one run) or --webhook (its token is printed
once). --notify is always, needed (only when something failed, changed or needs you) or
never; --room is a crew it reports in instead of its DM.`,
		Args: usageArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			for _, set := range []bool{in.Trigger.Cron != "", in.Trigger.On != "", webhook} {
				if set {
					n++
				}
			}
			if n != 1 {
				return errors.New("Give a routine one trigger: --cron, --on or --webhook.")
			}
			switch {
			case in.Trigger.Cron != "":
				in.Trigger.Kind = node.TriggerSchedule
			case in.Trigger.On != "":
				in.Trigger.Kind = node.TriggerEvent
			default:
				in.Trigger.Kind = node.TriggerWebhook
			}
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var r node.Routine
			if err := c.do(cmd.Context(), "POST", "/api/node/routines", in, &r); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Made the routine %s (%s).\n", r.ID, triggerLine(r.Trigger))
			if r.Token != "" {
				fmt.Fprintf(out, "Its webhook: POST /api/node/hooks/routines/%s with Authorization: Bearer %s\nThe token is shown this once.\n", r.ID, r.Token)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.Node, "node", "", "the node that does it (@handle or id)")
	f.StringVar(&in.Instruction, "instruction", "", "what it does each time")
	f.StringVar(&in.Title, "title", "", "its title (the instruction's start when not given)")
	f.StringVar(&in.Trigger.Cron, "cron", "", `a five-field schedule, such as "0 9 * * 1-5"`)
	f.StringVar(&in.Trigger.Timezone, "timezone", "", "the schedule's time zone (this computer's when not given)")
	f.StringVar(&in.Trigger.On, "on", "", "run when tasks or pages change: task or page")
	f.IntVar(&in.Trigger.WindowSeconds, "window", 0, "seconds of changes or calls gathered into one run")
	f.BoolVar(&webhook, "webhook", false, "run when its webhook is called")
	f.StringVar(&in.Notify, "notify", "", "always, needed or never (always when not given)")
	f.StringVar(&in.RoomID, "room", "", "a crew it reports in (its DM when not given)")
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}

func newRoutinesRunCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "run ID",
		Short: "Run a routine now",
		Long:  `Run a routine now, whatever its trigger; it waits for a run of it still going.`,
		Args:  usageArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var run node.RoutineRun
			if err := c.do(cmd.Context(), "POST", "/api/node/routines/"+url.PathEscape(args[0])+"/run", nil, &run); err != nil {
				return err
			}
			if run.Status == node.RunWaiting {
				fmt.Fprintf(cmd.OutOrStdout(), "Run %s waits for the one going.\n", run.ID)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Started run %s.\n", run.ID)
			return nil
		},
	}
}

func newRoutinesDeleteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a routine with its history",
		Args:  usageArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			if err := c.do(cmd.Context(), "DELETE", "/api/node/routines/"+url.PathEscape(args[0]), nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted the routine %s.\n", args[0])
			return nil
		},
	}
}
