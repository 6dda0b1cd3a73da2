package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/needs"
)

func newNeedsCmd(g *globals) *cobra.Command {
	var interactive, all, asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "needs",
		Short: "See and answer what your agents are waiting on (Needs me)",
		Long: `Needs me holds every question your agents have for you: permissions for tool calls
the judge would not allow on its own (allow once, allow for this run, or refuse) and
questions with options. Each is answered once, from the window, a phone or here; the
first answer wins and the run that asked goes on.

Without arguments, list the open ones with their options, numbered from 1, and the
recommended one marked. With --interactive, go through them one by one: type a number,
or press Enter for the recommended option.`,
		Example: `  ensemble needs                         # what is waiting for you
  ensemble needs -i                      # answer them one by one at the terminal
  ensemble needs answer dec_0123456789abcdef 1
  ensemble needs answer dec_0123456789abcdef refuse
  ensemble needs answer dec_0123456789abcdef --text "Use the staging database"
  ensemble needs --all --limit 20        # answered, withdrawn and expired too`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return groupRun(cmd, args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			if interactive {
				if all || asJSON {
					return errors.New("--interactive answers the open decisions; it does not go with --all or --json.")
				}
				return answerInteractively(cmd.Context(), c, cmd.InOrStdin(), cmd.OutOrStdout())
			}
			q := url.Values{}
			if all {
				q.Set("all", "1")
			}
			if limit > 0 {
				q.Set("limit", strconv.Itoa(limit))
			}
			ds, err := listNeeds(cmd.Context(), c, q)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				e := json.NewEncoder(out)
				e.SetIndent("", "  ")
				return e.Encode(ds)
			}
			if len(ds) == 0 {
				if all {
					fmt.Fprintln(out, "Nothing has needed you yet.")
				} else {
					fmt.Fprintln(out, "Nothing needs you.")
				}
				return nil
			}
			for i, d := range ds {
				if i > 0 {
					fmt.Fprintln(out)
				}
				printDecision(out, d)
			}
			if !all {
				fmt.Fprintf(out, "\nAnswer with `ensemble needs answer ID CHOICE`, or go through them with `ensemble needs -i`.\n")
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&interactive, "interactive", "i", false, "go through the open decisions one by one, answering at the terminal")
	cmd.Flags().BoolVar(&all, "all", false, "list settled decisions too (answered, withdrawn, expired)")
	cmd.Flags().IntVar(&limit, "limit", 0, "list at most this many (default 100)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the decisions as JSON")
	cmd.AddCommand(newNeedsAnswerCmd(g))
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}

func newNeedsAnswerCmd(g *globals) *cobra.Command {
	var text string
	cmd := &cobra.Command{
		Use:   "answer ID [CHOICE]",
		Short: "Answer one decision on Needs me",
		Long: `Answer one open decision. CHOICE is an option's number as ` + "`ensemble needs`" + ` lists it
(from 1), or the option's text (any case). Where the question takes free text, give it
with --text instead. The first answer wins: if the decision was answered elsewhere
first, this says by whom and when, and changes nothing.`,
		Example: `  ensemble needs answer dec_0123456789abcdef 3          # the third option
  ensemble needs answer dec_0123456789abcdef "allow once"
  ensemble needs answer dec_0123456789abcdef --text "Call it retry_after"`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return errors.New("Missing ID; say which decision: ensemble needs answer ID CHOICE (the ids are in `ensemble needs`).")
			case len(args) > 2:
				return errors.New("Too many arguments: put a CHOICE with spaces in quotes.")
			case len(args) == 1 && !cmd.Flags().Changed("text"):
				return errors.New("Give a CHOICE (an option's number or text) or --text.")
			case len(args) == 2 && cmd.Flags().Changed("text"):
				return errors.New("Give either a CHOICE or --text, not both.")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			var d needs.Decision
			if err := c.do(cmd.Context(), "GET", "/api/needs/"+url.PathEscape(args[0]), nil, &d); err != nil {
				return err
			}
			body := map[string]any{"text": text}
			if len(args) == 2 {
				if body, err = choiceBody(d, args[1]); err != nil {
					return err
				}
			}
			if err := c.do(cmd.Context(), "POST", "/api/needs/"+url.PathEscape(d.ID)+"/answer", body, &d); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Answered “%s” to: %s\n", d.Answer.Text, oneLine(d.Title()))
			return nil
		},
	}
	cmd.Flags().StringVar(&text, "text", "", "answer in your own words, where the question allows it")
	return cmd
}

// choiceBody turns what the person typed into an answer: a number is an option (from 1); anything
// else is the option's text, or free text where the decision allows it (the runtime decides).
func choiceBody(d needs.Decision, choice string) (map[string]any, error) {
	choice = strings.TrimSpace(choice)
	if n, err := strconv.Atoi(choice); err == nil {
		if n < 1 || n > len(d.Options) {
			if len(d.Options) == 0 {
				return nil, errors.New("This question has no options; answer with --text.")
			}
			return nil, fmt.Errorf("There is no option %d: choose 1 to %d.", n, len(d.Options))
		}
		return map[string]any{"option": n - 1}, nil
	}
	return map[string]any{"text": choice}, nil
}

func listNeeds(ctx context.Context, c *client, q url.Values) ([]needs.Decision, error) {
	var list struct {
		Needs []needs.Decision `json:"needs"`
	}
	if err := c.do(ctx, "GET", "/api/needs?"+q.Encode(), nil, &list); err != nil {
		return nil, err
	}
	return list.Needs, nil
}

// printDecision writes one card: what it asks, from which run, and its options.
func printDecision(w io.Writer, d needs.Decision) {
	kind := "Question"
	if d.Kind == needs.Permission {
		kind = "Permission"
	}
	from := d.Source.Title
	if d.Source.RunID != "" {
		from = strings.TrimSpace(from + " (" + d.Source.RunID + ")")
	}
	if from != "" {
		from = " · " + from
	}
	fmt.Fprintf(w, "%s  %s%s · asked %s\n", d.ID, kind, from, d.Created.Local().Format("15:04 on 2 Jan"))
	if d.Kind == needs.Permission {
		fmt.Fprintf(w, "  Run: %s\n", indent(d.Call))
		if d.Reason != "" {
			fmt.Fprintf(w, "  Why: %s\n", indent(d.Reason))
		}
		if t := touches(d); t != "" {
			fmt.Fprintf(w, "  Touches: %s\n", t)
		}
	} else {
		fmt.Fprintf(w, "  %s\n", indent(d.Question))
	}
	if d.Status != needs.Open {
		fmt.Fprintf(w, "  %s\n", settledLine(d))
		return
	}
	for i, o := range d.Options {
		mark := ""
		if i == d.Recommended {
			mark = "  (recommended)"
		}
		fmt.Fprintf(w, "  %d. %s%s\n", i+1, o, mark)
	}
	if d.FreeText {
		if len(d.Options) > 0 {
			fmt.Fprintln(w, "  or answer in your own words")
		} else {
			fmt.Fprintln(w, "  answer in your own words")
		}
	}
}

func touches(d needs.Decision) string {
	var parts []string
	add := func(what string, xs []string) {
		if len(xs) > 0 {
			parts = append(parts, what+" "+strings.Join(xs, ", "))
		}
	}
	add("runs", d.Touches.Programs)
	add("reads", d.Touches.Reads)
	add("writes", d.Touches.Writes)
	add("reaches", d.Touches.Hosts)
	add("outside folders", d.Touches.Folders)
	return strings.Join(parts, "; ")
}

func settledLine(d needs.Decision) string {
	switch d.Status {
	case needs.Answered:
		answer := ""
		if d.Answer != nil {
			answer = "“" + d.Answer.Text + "”"
		}
		return fmt.Sprintf("Answered %s (%s)", answer, d.AnsweredBy)
	case needs.Withdrawn:
		return "Withdrawn: its run ended"
	case needs.Expired:
		return "Expired: no one was waiting for the answer any more"
	}
	return string(d.Status)
}

// indent keeps the lines of a long text under its label.
func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

func oneLine(s string) string {
	s, _, cut := strings.Cut(s, "\n")
	if cut || len([]rune(s)) > 100 {
		r := []rune(s)
		return string(r[:min(len(r), 100)]) + "…"
	}
	return s
}

// answerInteractively goes through the open decisions, oldest first, asking at the terminal.
func answerInteractively(ctx context.Context, c *client, in io.Reader, out io.Writer) error {
	ds, err := listNeeds(ctx, c, url.Values{})
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		fmt.Fprintln(out, "Nothing needs you.")
		return nil
	}
	slices.Reverse(ds) // the list is newest first; answer in the order they were asked
	rd := bufio.NewReader(in)
	answered := 0
	for i, d := range ds {
		fmt.Fprintf(out, "\n(%d of %d) ", i+1, len(ds))
		printDecision(out, d)
		done, quit, err := askOne(ctx, c, rd, out, d)
		if err != nil {
			return err
		}
		if done {
			answered++
		}
		if quit {
			break
		}
	}
	fmt.Fprintf(out, "\nAnswered %d of %d.\n", answered, len(ds))
	return nil
}

// askOne prompts until d is answered (here or elsewhere), skipped or the person quits.
func askOne(ctx context.Context, c *client, rd *bufio.Reader, out io.Writer, d needs.Decision) (answered, quit bool, err error) {
	for {
		fmt.Fprint(out, prompt(d))
		line, err := rd.ReadString('\n')
		if err != nil && (!errors.Is(err, io.EOF) || line == "") {
			fmt.Fprintln(out)
			return false, true, nil // end of input: stop here
		}
		r, err := answerLine(ctx, c, out, d, line)
		if err != nil || r != reprompt {
			return r == answeredHere, r == quitAsking, err
		}
	}
}

// lineResult is what one typed line did to the decision being asked.
type lineResult int

const (
	reprompt     lineResult = iota // nothing yet: ask again
	answeredHere                   // answered with the line
	settled                        // skipped, or answered elsewhere meanwhile: on to the next
	quitAsking                     // the person quit
)

// answerLine acts on one line typed at d's prompt: a choice answers it; Enter alone chooses
// nothing (a recommendation is a hint, never an answer given for the person, least of all a
// Refuse they did not type).
func answerLine(ctx context.Context, c *client, out io.Writer, d needs.Decision, line string) (lineResult, error) {
	line = strings.TrimSpace(line)
	var body map[string]any
	switch {
	case line == "s" || line == "skip":
		fmt.Fprintln(out, "  Skipped.")
		return settled, nil
	case line == "q" || line == "quit":
		return quitAsking, nil
	case line == "":
		fmt.Fprintf(out, "  Nothing is chosen for you: %s.\n", choices(d))
		return reprompt, nil
	default:
		var err error
		if body, err = choiceBody(d, line); err != nil {
			fmt.Fprintf(out, "  %s.\n", capital(err.Error()))
			return reprompt, nil
		}
	}
	var got needs.Decision
	err := c.do(ctx, "POST", "/api/needs/"+url.PathEscape(d.ID)+"/answer", body, &got)
	var ae *apiError
	switch {
	case err == nil:
		fmt.Fprintf(out, "  Answered “%s”.\n", got.Answer.Text)
		return answeredHere, nil
	case errors.As(err, &ae) && ae.Status == http.StatusBadRequest:
		fmt.Fprintf(out, "  %s\n", ae.Message)
		return reprompt, nil
	case errors.As(err, &ae) && (ae.Status == http.StatusConflict || ae.Status == http.StatusNotFound):
		fmt.Fprintf(out, "  %s\n", ae.Message) // settled elsewhere meanwhile: on to the next
		return settled, nil
	default:
		return quitAsking, err
	}
}

// choices says what may be typed at d's prompt, in words.
func choices(d needs.Decision) string {
	var p []string
	if n := len(d.Options); n > 0 {
		p = append(p, fmt.Sprintf("type 1 to %d", n))
	}
	if d.FreeText {
		p = append(p, "type your answer")
	}
	p = append(p, "s to skip", "q to quit")
	s := strings.Join(p, ", ")
	if d.Recommended >= 0 && d.Recommended < len(d.Options) {
		s += fmt.Sprintf(" (%d is recommended)", d.Recommended+1)
	}
	return s
}

func prompt(d needs.Decision) string {
	var p []string
	if n := len(d.Options); n > 0 {
		p = append(p, fmt.Sprintf("1-%d", n))
	}
	if d.FreeText {
		p = append(p, "your answer")
	}
	p = append(p, "s to skip", "q to quit")
	if d.Recommended >= 0 && d.Recommended < len(d.Options) {
		p[len(p)-1] += fmt.Sprintf("; %d is recommended", d.Recommended+1)
	}
	return "  Choose (" + strings.Join(p, ", ") + "): "
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
