package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/sessions"
)

func newSessionsCmd(g *globals) *cobra.Command {
	var taskID, q string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List agent sessions; show or delete one",
		Long: "List the agent sessions of the running runtime, newest first: each is the runs that continue\n" +
			"one conversation with a coding agent. `ensemble sessions show ID` shows one with its runs;\n" +
			"`ensemble sessions delete ID` deletes one so it is never reopened.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			v := url.Values{}
			if taskID != "" {
				v.Set("taskId", taskID)
			}
			if q != "" {
				v.Set("q", q)
			}
			if limit > 0 {
				v.Set("limit", strconv.Itoa(limit))
			}
			var list struct {
				Sessions []sessions.Session `json:"sessions"`
			}
			if err := c.do(cmd.Context(), "GET", "/api/agent/sessions?"+v.Encode(), nil, &list); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return sessionsJSON(out, list.Sessions)
			}
			if len(list.Sessions) == 0 {
				fmt.Fprintln(out, "No agent sessions.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tAGENT\tSTATUS\tRUNS\tLAST ACTIVE\tLATEST TASK")
			for _, s := range list.Sessions {
				status := string(s.Status)
				switch {
				case s.DeletedAt != nil:
					status = "deleted"
				case !s.Resumable:
					status += " (not resumable)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", s.ID, s.Agent, status, s.RunCount,
					s.LastActive.Local().Format(time.DateTime), s.LatestTask.Title)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&taskID, "task", "", "only sessions with a run of this task")
	cmd.Flags().StringVar(&q, "q", "", "only sessions whose tasks, summary, agent or folder have these words")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many (1 to 200; 50 by default)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as JSON")
	cmd.AddCommand(newSessionsShowCmd(g), newSessionsDeleteCmd(g))
	return cmd
}

func newSessionsShowCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show an agent session with its runs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var d sessions.Detail
			if err := c.do(cmd.Context(), "GET", "/api/agent/sessions/"+url.PathEscape(args[0]), nil, &d); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return sessionsJSON(out, d)
			}
			fmt.Fprintf(out, "Session %s: %s, %s\n", d.ID, d.Agent, d.Status)
			if d.Model != "" {
				fmt.Fprintf(out, "Model: %s\n", d.Model)
			}
			fmt.Fprintf(out, "Folder: %s\n", d.Folder)
			switch {
			case d.DeletedAt != nil:
				fmt.Fprintf(out, "Deleted %s (%s); it will not be reopened.\n", d.DeletedAt.Local().Format(time.DateTime), d.DeletedWhy)
			case d.Resumable:
				fmt.Fprintf(out, "Resumable: continue it with ensemble run --continue %s\n", d.LastRun)
			default:
				fmt.Fprintln(out, "Not resumable: no run recorded the agent's session.")
			}
			if d.Summary != "" {
				fmt.Fprintf(out, "Latest report: %s\n", d.Summary)
			}
			fmt.Fprintln(out)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tSTATUS\tSTARTED\tTASK")
			for _, r := range d.Runs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Status, r.CreatedAt.Local().Format(time.DateTime), r.Title)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the session as JSON")
	return cmd
}

func newSessionsDeleteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete an agent session: it is never reopened; its runs and files stay",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var s sessions.Session
			if err := c.do(cmd.Context(), "DELETE", "/api/agent/sessions/"+url.PathEscape(args[0]), nil, &s); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted agent session %s (“%s”); it will not be reopened.\n", s.ID, s.FirstTask.Title)
			return nil
		},
	}
}

func sessionsJSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(v)
}
