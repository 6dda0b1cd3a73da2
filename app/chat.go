package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/assistant"
)

func newChatCmd(g *globals) *cobra.Command {
	var req assistant.TurnRequest
	var list bool
	cmd := &cobra.Command{
		Use:   "chat MESSAGE",
		Short: "Ask the assistant, or list recent chats",
		Long: `Send one message to the assistant of the running runtime and print its answer as it
arrives, with one line per tool it used (✓ done, ✗ failed). The chat is saved: continue it
with --conversation, here or in the window. Ctrl-C stops the answer; what arrived is kept.

The provider and model come from the assistant's settings (Settings → Assistant) unless
--provider and --model name others. --list lists recent chats instead.`,
		Example: `  ensemble chat "what is due this week?"
  ensemble chat --conversation cnv_0123456789abcdef "move the first one to In progress"
  ensemble chat --provider openai --model gpt-5 "add a task: call Mira"
  ensemble chat --list`,
		RunE: func(cmd *cobra.Command, args []string) error {
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
			return chat(ctx, c, req, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&req.ConversationID, "conversation", "", "continue this chat (its id, from --list)")
	cmd.Flags().StringVar(&req.Model, "model", "", "the model, instead of the one in the assistant's settings")
	cmd.Flags().StringVar(&req.Provider, "provider", "", "anthropic or openai, instead of the one in the assistant's settings")
	cmd.Flags().BoolVar(&list, "list", false, "list recent chats, newest first")
	return cmd
}

// chat sends one turn and prints it as it streams: the text as it arrives, one line per tool row
// that ends, and where to continue. A turn that fails or is stopped ends with its sentence as the
// error.
func chat(ctx context.Context, c *client, req assistant.TurnRequest, out, errOut io.Writer) error {
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
