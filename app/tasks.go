package app

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/records"
)

func newTasksCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "List, add and move tasks",
		Long: `List, add and move the tasks of the running runtime. The commands find it through
api.json in the data folder (--data), which ` + "`ensemble serve`" + ` writes while it runs.`,
		RunE: groupRun,
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newTasksListCmd(g), newTasksAddCmd(g), newTasksMoveCmd(g))
	return cmd
}

// usageArgs is cobra.ExactArgs(n) with a sentence for the person: how the command is run.
func usageArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		line := cmd.CommandPath()
		if _, want, _ := strings.Cut(cmd.Use, " "); want != "" {
			line += " " + want
		}
		return fmt.Errorf("Run it as `%s`; `%s --help` says more.", line, cmd.CommandPath())
	}
}

// badFlagValue is pflag's error for a value a flag cannot take.
var badFlagValue = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag`)

// flagError is a flag cobra could not take, as a sentence: an unknown flag, or a value of the
// wrong kind (without strconv's words).
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if m := badFlagValue.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("%s does not take %q", m[2], m[1])
	} else if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return fmt.Errorf("%s; `%s --help` lists the flags.", msg, cmd.CommandPath())
}

// groupRun runs a command that holds commands: its help without arguments, a sentence for a
// command it does not hold.
func groupRun(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	return fmt.Errorf("There is no command `%s %s`; `%s --help` lists them.", cmd.CommandPath(), args[0], cmd.CommandPath())
}

func newTasksListCmd(g *globals) *cobra.Command {
	var status, label string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List tasks not in Trash, by status",
		Long: `List the tasks not in Trash, grouped by status in the board's order: id, status,
priority, due date and title. --status and --label narrow the list; --json prints
every field.`,
		Example: `  ensemble tasks list
  ensemble tasks list --status in_progress --label auth`,
		Args: usageArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			q := url.Values{}
			if status != "" {
				q.Set("status", status)
			}
			if label != "" {
				q.Set("label", label)
			}
			var list struct {
				Tasks []records.Task `json:"tasks"`
			}
			if err := c.do(cmd.Context(), "GET", "/api/tasks?"+q.Encode(), nil, &list); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				e := json.NewEncoder(out)
				e.SetIndent("", "  ")
				return e.Encode(list.Tasks)
			}
			if len(list.Tasks) == 0 {
				fmt.Fprintln(out, "No tasks.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATUS\tPRIORITY\tDUE\tTITLE")
			for _, t := range byBoardOrder(list.Tasks) {
				due := "-"
				if t.Due != nil {
					due = *t.Due
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Status.Label(), t.Priority, due, t.Title)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only tasks with this status ("+statusNames()+")")
	cmd.Flags().StringVar(&label, "label", "", "only tasks with this label")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tasks as JSON")
	return cmd
}

// byBoardOrder orders tasks by status as the board's columns do, keeping the server's order within one.
func byBoardOrder(ts []records.Task) []records.Task {
	var out []records.Task
	for _, st := range records.Statuses {
		for _, t := range ts {
			if t.Status == st {
				out = append(out, t)
			}
		}
	}
	return out
}

func statusNames() string {
	names := make([]string, len(records.Statuses))
	for i, s := range records.Statuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

func newTasksAddCmd(g *globals) *cobra.Command {
	var status, priority, due, page string
	var labels []string
	cmd := &cobra.Command{
		Use:   "add TITLE",
		Short: "Add a task",
		Long: `Add a task to the board, in To do unless --status says otherwise. It is recorded as
your change, so Undo in the web UI takes it back. Prints the new task's id.`,
		Example: `  ensemble tasks add "Fix the login retry" --priority high --label auth --due 2026-12-31`,
		Args:    usageArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			in := records.TaskInput{Title: records.Some(args[0])}
			if status != "" {
				in.Status = records.Some(records.Status(status))
			}
			if priority != "" {
				in.Priority = records.Some(priority)
			}
			if due != "" {
				in.Due = records.Some(&due)
			}
			if len(labels) > 0 {
				in.Labels = records.Some(labels)
			}
			if page != "" {
				in.Page = records.Some(page)
			}
			var t records.Task
			if err := c.do(cmd.Context(), "POST", "/api/tasks", in, &t); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Added task “%s” to %s (%s).\n", t.Title, t.Status.Label(), t.ID)
			return nil
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "status to start in (default todo)")
	cmd.Flags().StringVar(&priority, "priority", "", "none, low, medium, high or urgent")
	cmd.Flags().StringVar(&due, "due", "", "due date, YYYY-MM-DD")
	cmd.Flags().StringSliceVar(&labels, "label", nil, "a label (repeat for more)")
	cmd.Flags().StringVar(&page, "page", "", "the task's page, in Markdown")
	return cmd
}

func newTasksMoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "move ID STATUS",
		Short: "Move a task to another status",
		Long: `Move a task to another status. The task state machine decides which moves are
allowed; a refused move says which ones are. Statuses: ` + statusNames() + ".",
		Example: "  ensemble tasks move tsk_0123456789abcdef in_progress",
		Args:    usageArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var t records.Task
			in := records.TaskInput{Status: records.Some(records.Status(args[1]))}
			if err := c.do(cmd.Context(), "PATCH", "/api/tasks/"+url.PathEscape(args[0]), in, &t); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Moved task “%s” to %s.\n", t.Title, t.Status.Label())
			return nil
		},
	}
}
