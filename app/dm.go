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
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/node"
)

func newDMCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "dm HANDLE MESSAGE",
		Short: "Write to one of your nodes in its DM and print its reply",
		Long: `Post a message in a node's DM (the node by @handle or id) and print its reply as it is
written, then the reply as posted. When the node asks for something on a card (changes it
wants to make, a node it wants to add), the card is printed with its id; at a terminal it
asks [a]pprove / [d]iscard / [s]kip, elsewhere answer it in the window or with
` + "`ensemble nodes card ID approve`" + `. It ends when the node is done answering, or after --timeout;
Ctrl-C stops waiting (the node goes on; its reply is in the DM).

The node answers with its own model, or the assistant's (Settings → Assistant) when it has
none; with no model set up, the reply is an error line saying so, and this exits 1.`,
		Example: `  ensemble dm ada "what is due this week?"
  ensemble dm @ada "remember that I prefer short answers" --timeout 2m`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 || strings.TrimSpace(strings.Join(args[1:], " ")) == "" {
				return fmt.Errorf("Run it as `%s HANDLE \"MESSAGE\"`; `%s --help` says more.", cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout <= 0 {
				return errors.New("--timeout is how long to wait for the reply, more than 0 (such as 10m).")
			}
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			var ask io.Reader // answers to a card, only from a person at a terminal
			if f, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(f.Fd()) {
				ask = f
			}
			return dm(ctx, c, args[0], strings.Join(args[1:], " "), timeout, ask, cmd.OutOrStdout())
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait for the reply")
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}

// dm posts body in the node's DM and follows the room's node events until the node is done: its
// reply's text as it streams, the posted reply, its cards (asked about when ask is a terminal).
// The stream is open before the message is posted, so no live frame of the reply is missed.
func dm(ctx context.Context, c *client, ref, body string, timeout time.Duration, ask io.Reader, out io.Writer) error {
	n, err := getNode(ctx, c, ref)
	if err != nil {
		return err
	}
	if n.DMRoomID == "" {
		return fmt.Errorf("%s has no DM.", n.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	streams, endStream := context.WithCancel(ctx)
	defer endStream()
	q := url.Values{"kinds": {"node."}, "subject": {n.DMRoomID}}
	req, err := http.NewRequestWithContext(streams, "GET", c.f.URL+"/api/events?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.f.Token)
	resp, err := (&http.Client{}).Do(req) // no timeout of its own: the reply takes as long as it takes
	if err != nil {
		return fmt.Errorf("Ensemble is not answering at %s: %w", c.f.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return responseError(resp)
	}
	evs := make(chan sseEvent, 256)
	go func() {
		defer close(evs)
		readSSE(resp.Body, func(ev sseEvent) bool {
			select {
			case evs <- ev:
				return true
			case <-streams.Done():
				return false
			}
		})
	}()
	var posted node.Message
	post := node.Post{Body: body, ClientID: ledger.NewID("cli_")}
	if err := c.do(ctx, "POST", "/api/node/rooms/"+url.PathEscape(n.DMRoomID)+"/messages", post, &posted); err != nil {
		return err
	}
	var lines chan typedLine
	if ask != nil {
		lines = make(chan typedLine)
		go readLines(streams, bufio.NewReader(ask), lines)
	}
	f := &dmFollow{c: c, n: n, out: out, lines: lines, after: posted.Seq, streamed: map[string]bool{}}
	for {
		select {
		case <-ctx.Done():
			f.endLine()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s did not finish answering within %s; its reply will be in its DM.", n.Name, timeout)
			}
			return errors.New("Stopped waiting; the reply will be in the DM.")
		case ev, ok := <-evs:
			if !ok {
				f.endLine()
				return errors.New("The runtime's event stream ended before the reply; it will be in the DM.")
			}
			done, err := f.event(ctx, ev)
			if err != nil {
				return err
			}
			if done {
				f.endLine()
				return f.failure
			}
		}
	}
}

// dmFollow is what dm has seen of the node's answer.
type dmFollow struct {
	c     *client
	n     node.Node
	out   io.Writer
	lines chan typedLine // a terminal's lines; nil when no one is asked
	after int64          // the person's message: what came before it is not this answer

	midLine  bool            // the text printed so far does not end with a newline
	streamed map[string]bool // turns whose text was printed as it streamed
	working  bool            // the node started on it (thinking, or a reply came)
	awaiting bool            // a card was answered here: the node goes on with it
	failure  error           // the node's error line, returned at the end
}

func (f *dmFollow) endLine() {
	if f.midLine {
		fmt.Fprintln(f.out)
		f.midLine = false
	}
}

// event takes one event; done says the node has finished answering.
func (f *dmFollow) event(ctx context.Context, ev sseEvent) (done bool, err error) {
	switch ev.kind {
	case node.KindFrame:
		var fr node.Frame
		if json.Unmarshal(ev.data, &fr) != nil || fr.NodeID != f.n.ID || fr.Type != "text" || fr.Text == "" {
			return false, nil
		}
		if !f.streamed[fr.TurnID] {
			fmt.Fprintf(f.out, "%s: ", f.n.Name)
			f.streamed[fr.TurnID] = true
		}
		fmt.Fprint(f.out, fr.Text)
		f.midLine = !strings.HasSuffix(fr.Text, "\n")
	case node.KindStatus:
		var st node.Status
		if json.Unmarshal(ev.data, &st) != nil || st.NodeID != f.n.ID {
			return false, nil
		}
		switch st.State {
		case "thinking":
			f.working, f.awaiting = true, false
		case "idle":
			return f.working && !f.awaiting, nil
		}
	case node.KindMessage:
		var m node.Message
		if json.Unmarshal(ev.data, &m) != nil || m.Seq <= f.after || m.Author == node.AuthorPerson {
			return false, nil
		}
		if m.Author == node.AuthorNode && m.NodeID != f.n.ID {
			return false, nil
		}
		return false, f.message(ctx, m)
	}
	return false, nil
}

// message prints one of the node's (or the system's) messages in the DM.
func (f *dmFollow) message(ctx context.Context, m node.Message) error {
	switch m.Kind {
	case node.KindText:
		f.working, f.awaiting = true, false
		if f.streamed[m.TurnID] {
			f.endLine() // its text is printed already, as it streamed
			return nil
		}
		f.endLine()
		fmt.Fprintf(f.out, "%s: %s\n", f.n.Name, m.Body)
	case node.KindError:
		f.working, f.awaiting = true, false
		f.endLine()
		fmt.Fprintf(f.out, "%s could not answer: %s\n", f.n.Name, m.Body)
		f.failure = exitError{1}
	case node.KindApproval:
		var card node.Card
		json.Unmarshal(m.Data, &card)
		if card.Status != node.CardPending {
			return nil
		}
		f.endLine()
		fmt.Fprintf(f.out, "Card %s from %s: %s\n", m.ID, f.n.Name, m.Body)
		return f.askCard(ctx, m)
	default:
		f.endLine()
		fmt.Fprintf(f.out, "· %s\n", m.Body)
	}
	return nil
}

// askCard asks the person at the terminal what to do with a card; elsewhere it says how to
// answer it.
func (f *dmFollow) askCard(ctx context.Context, m node.Message) error {
	if f.lines == nil {
		fmt.Fprintf(f.out, "Answer it in the window, or with `ensemble nodes card %s approve` (or discard).\n", m.ID)
		return nil
	}
	for {
		fmt.Fprint(f.out, "[a]pprove / [d]iscard / [s]kip: ")
		var line typedLine
		select {
		case <-ctx.Done():
			fmt.Fprintln(f.out)
			return nil
		case line = <-f.lines:
		}
		if line.end {
			fmt.Fprintln(f.out)
			f.lines = nil // no more answers come from here
			return nil
		}
		var decision string
		switch strings.ToLower(strings.TrimSpace(line.text)) {
		case "a", "approve":
			decision = node.Approve
		case "d", "discard":
			decision = node.Discard
		case "s", "skip", "":
			fmt.Fprintf(f.out, "Skipped; it waits in the window (card %s).\n", m.ID)
			return nil
		default:
			fmt.Fprintln(f.out, "Type a, d or s.")
			continue
		}
		got, err := answerCard(ctx, f.c, m.ID, decision)
		if err != nil {
			// Answered elsewhere first, or its work failed: say so and go on following.
			fmt.Fprintln(f.out, err.Error())
			return nil
		}
		fmt.Fprintln(f.out, cardOutcome(got))
		f.awaiting = true
		return nil
	}
}

// answerCard settles a node's card.
func answerCard(ctx context.Context, c *client, id, decision string) (node.Message, error) {
	var m node.Message
	err := c.do(ctx, "POST", "/api/node/approvals/"+url.PathEscape(id), map[string]string{"decision": decision}, &m)
	return m, err
}

// cardOutcome is an answered card in a line.
func cardOutcome(m node.Message) string {
	var card node.Card
	json.Unmarshal(m.Data, &card)
	switch card.Status {
	case node.CardApproved:
		return strings.TrimSpace("Approved. " + card.Result)
	case node.CardDiscarded:
		return "Discarded."
	}
	return "The card is " + card.Status + "."
}
