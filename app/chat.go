package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/assistant"
)

func newChatCmd(g *globals) *cobra.Command {
	var req assistant.TurnRequest
	var list bool
	var applyConv string
	cmd := &cobra.Command{
		Use:   "chat MESSAGE",
		Short: "Ask the assistant, or list recent chats",
		Long: `Send one message to the assistant of the running runtime and print its answer as it
arrives, with one line per tool it used (✓ done, ✗ failed). The chat is saved: continue it
with --conversation, here or in the window. Ctrl-C stops the answer; what arrived is kept.

Changes that wait for Apply (under the preview policy, and every assignment to an agent) are
listed, numbered, after the answer; at a terminal it asks which to apply. Elsewhere it says how
many wait: --apply CONVERSATION applies them all.

The provider and model come from the assistant's settings (Settings → Assistant) unless
--provider and --model name others. With --provider claude-code, codex, opencode or gemini-cli the
chat runs on your own plan (Claude, ChatGPT, what OpenCode signs in to, or Gemini): that agent, signed in on this
computer, answers with Ensemble's tools only (the model is then optional: the agent's default). --list lists recent chats instead.`,
		Example: `  ensemble chat "what is due this week?"
  ensemble chat --conversation cnv_0123456789abcdef "move the first one to In progress"
  ensemble chat --provider openai --model gpt-5 "add a task: call Mira"
  ensemble chat --provider claude-code "what changed on the board today?"
  ensemble chat --list
  ensemble chat --apply cnv_0123456789abcdef`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if applyConv != "" {
				if len(args) > 0 || list {
					return errors.New("--apply takes no message")
				}
				c, err := connect(cmd.Context(), g)
				if err != nil {
					return err
				}
				return applyChanges(cmd.Context(), c, applyConv, nil, cmd.OutOrStdout())
			}
			if list {
				if len(args) > 0 {
					return errors.New("--list takes no message")
				}
				c, err := connect(cmd.Context(), g)
				if err != nil {
					return err
				}
				return listChats(cmd.Context(), c, cmd.OutOrStdout())
			}
			req.Text = strings.TrimSpace(strings.Join(args, " "))
			if req.Text == "" {
				return errors.New(`write a message: ensemble chat "…" (or --list for recent chats)`)
			}
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			var ask io.Reader // answers to "Apply?", only from a person at a terminal
			if f, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(f.Fd()) {
				ask = f
			}
			return chat(ctx, c, req, ask, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&req.ConversationID, "conversation", "", "continue this chat (its id, from --list)")
	cmd.Flags().StringVar(&req.Model, "model", "", "the model, instead of the one in the assistant's settings")
	cmd.Flags().StringVar(&req.Provider, "provider", "", "anthropic, openai, ollama, or your plan: claude-code, codex, opencode or gemini-cli (instead of the assistant's settings)")
	cmd.Flags().BoolVar(&list, "list", false, "list recent chats, newest first")
	cmd.Flags().StringVar(&applyConv, "apply", "", "apply every change this chat holds for Apply (its id)")
	return cmd
}

// chat sends one turn and prints it as it streams: the text as it arrives, one line per tool row
// that ends, and where to continue. A turn that fails or is stopped ends with its sentence as the
// error. The changes it leaves waiting for Apply are listed; with ask (a person at a terminal) it
// asks which to apply, else it says how to apply them.
func chat(ctx context.Context, c *client, req assistant.TurnRequest, ask io.Reader, out, errOut io.Writer) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, "POST", c.f.URL+"/api/assistant/turn", bytes.NewReader(b))
	if err != nil {
		return err
	}
	hreq.Header.Set("Authorization", "Bearer "+c.f.Token)
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{}).Do(hreq) // no timeout: a turn lasts as long as the model takes
	if err != nil {
		if ctx.Err() != nil {
			return errors.New("Stopped.")
		}
		return fmt.Errorf("Ensemble is not answering at %s (it may have stopped; start it with `ensemble serve`): %w", c.f.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return responseError(resp)
	}
	var (
		convID    string
		midLine   bool // the text printed so far does not end with a newline
		afterTool bool // the last thing printed is a tool line
		printed   bool // any text was printed
		failure   error
		done      bool
		held      []assistant.ToolRow // writes waiting for Apply in the chat
	)
	newline := func() {
		if midLine {
			fmt.Fprintln(out)
			midLine = false
		}
	}
	err = readSSE(resp.Body, func(ev sseEvent) bool {
		var d struct {
			ConversationID string             `json:"conversationId"`
			Text           string             `json:"text"`
			Tool           *assistant.ToolRow `json:"tool"`
			Reply          *assistant.Reply   `json:"reply"`
			Error          string             `json:"error"`
		}
		json.Unmarshal(ev.data, &d)
		switch ev.kind {
		case "conversation":
			convID = d.ConversationID
		case "text":
			if afterTool { // the tool lines already end the text before them
				if d.Text = strings.TrimLeft(d.Text, "\n"); d.Text == "" {
					return true
				}
				afterTool = false
			}
			fmt.Fprint(out, d.Text)
			printed = printed || d.Text != ""
			if d.Text != "" {
				midLine = !strings.HasSuffix(d.Text, "\n")
			}
		case "tool":
			if line := toolLine(d.Tool); line != "" {
				newline()
				fmt.Fprintln(out, line)
				afterTool = true
			}
		case "done":
			done = true
			if d.Reply != nil {
				for _, t := range d.Reply.Tools {
					if t.Status == "proposed" {
						held = append(held, t)
					}
				}
			}
			if !printed && d.Reply != nil { // nothing streamed: print the answer whole
				fmt.Fprint(out, d.Reply.Text)
				midLine = true
			}
		case "error":
			failure = errors.New(d.Error)
		}
		return true
	})
	newline()
	if done && len(held) > 0 {
		if err := offerApply(ctx, c, convID, held, ask, out); err != nil {
			return err
		}
	}
	if convID != "" {
		fmt.Fprintf(errOut, "Continue with: ensemble chat --conversation %s \"…\"\n", convID)
	}
	switch {
	case failure != nil:
		return failure
	case ctx.Err() != nil:
		// Closing the request stopped the turn; the runtime kept what had arrived.
		return errors.New("Stopped.")
	case err != nil:
		return fmt.Errorf("the answer's stream broke off (%v); the chat keeps what arrived", err)
	case !done:
		return errors.New("the answer's stream ended before the answer did; the chat keeps what arrived")
	}
	return nil
}

// toolLine is a tool row that ended, on one line: "✓ Added 2 tasks: …" or "✗ …"; "" while it runs.
func toolLine(t *assistant.ToolRow) string {
	if t == nil {
		return ""
	}
	text := t.Summary
	if text == "" {
		text = t.Name
	}
	text = strings.Join(strings.Fields(text), " ")
	switch t.Status {
	case "done":
		return "✓ " + text
	case "error":
		return "✗ " + text
	case "running":
		return ""
	}
	return "• " + text // held for Apply, waiting on Needs me
}

func listChats(ctx context.Context, c *client, out io.Writer) error {
	var list struct {
		Conversations []assistant.Summary `json:"conversations"`
	}
	if err := c.do(ctx, "GET", "/api/assistant/conversations", nil, &list); err != nil {
		return err
	}
	if len(list.Conversations) == 0 {
		fmt.Fprintln(out, `No chats yet. Start one with: ensemble chat "…"`)
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tMESSAGES\tTITLE")
	for _, s := range list.Conversations {
		title := s.Title
		if s.Busy {
			title += " (answering)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", s.ID, s.UpdatedAt.Local().Format("2006-01-02 15:04"), s.Messages, title)
	}
	return tw.Flush()
}

// offerApply lists the turn's changes that wait for Apply, numbered, and asks at a terminal which
// to apply: all, some by number, or none. Without a terminal it says how to apply them later.
func offerApply(ctx context.Context, c *client, convID string, held []assistant.ToolRow, ask io.Reader, out io.Writer) error {
	fmt.Fprintln(out, "Waiting for Apply:")
	for i, t := range held {
		fmt.Fprintf(out, "  %d. %s\n", i+1, strings.Join(strings.Fields(t.Preview), " "))
	}
	if ask == nil {
		fmt.Fprintf(out, "%s for Apply: ensemble chat --apply %s\n", waitCount(len(held)), convID)
		return nil
	}
	in := bufio.NewReader(ask)
	for {
		fmt.Fprint(out, "Apply? [a]ll / numbers / [n]o: ")
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			fmt.Fprintln(out)
			return nil // the input ended: nothing applied, the changes keep waiting
		}
		pick, ok := parsePick(line, len(held))
		if !ok {
			fmt.Fprintf(out, "Answer a, n, or numbers from 1 to %d (such as 1 3).\n", len(held))
			continue
		}
		switch {
		case pick == nil:
			fmt.Fprintf(out, "Nothing applied. %s: ensemble chat --apply %s\n", waitCount(len(held)), convID)
			return nil
		case len(pick) == len(held):
			return applyChanges(ctx, c, convID, nil, out)
		}
		ids := make([]string, 0, len(pick))
		for _, i := range pick {
			ids = append(ids, held[i].ProposalID)
		}
		return applyChanges(ctx, c, convID, ids, out)
	}
}

// waitCount is "1 change waits" or "3 changes wait".
func waitCount(n int) string {
	if n == 1 {
		return "1 change waits"
	}
	return fmt.Sprintf("%d changes wait", n)
}

// parsePick reads an answer to "Apply?": "a" (all, as every index), "n" or nothing (nil), or
// numbers from 1 to n separated by spaces or commas (their indexes, in order, once each).
func parsePick(line string, n int) ([]int, bool) {
	line = strings.ToLower(strings.TrimSpace(line))
	switch line {
	case "a", "all", "y", "yes":
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all, true
	case "", "n", "no":
		return nil, true
	}
	seen := map[int]bool{}
	var out []int
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' }) {
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 || k > n {
			return nil, false
		}
		if !seen[k-1] {
			seen[k-1] = true
			out = append(out, k-1)
		}
	}
	return out, len(out) > 0
}

// applyChanges applies held changes (the ids given, or every one the chat holds) and prints a
// receipt per change. A failed Apply ends with its sentence.
func applyChanges(ctx context.Context, c *client, convID string, ids []string, out io.Writer) error {
	var rows []assistant.ToolRow
	if ids == nil {
		var res struct {
			Tools []assistant.ToolRow `json:"tools"`
		}
		if err := c.do(ctx, "POST", "/api/assistant/conversations/"+url.PathEscape(convID)+"/apply-all", nil, &res); err != nil {
			return err
		}
		rows = res.Tools
	}
	for _, id := range ids {
		var res struct {
			Tool *assistant.ToolRow `json:"tool"`
		}
		if err := c.do(ctx, "POST", "/api/assistant/proposals/"+url.PathEscape(id)+"/apply", nil, &res); err != nil {
			for _, r := range rows {
				fmt.Fprintln(out, toolLine(&r))
			}
			return err
		}
		if res.Tool != nil {
			rows = append(rows, *res.Tool)
		}
	}
	for _, r := range rows {
		fmt.Fprintln(out, toolLine(&r))
	}
	return nil
}
