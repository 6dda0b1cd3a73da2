package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/terminal"
)

// Sign-ins a command needs (spec 002 §8.16.4). A node signs a command-line tool in with
// computer_run (az login, gh auth login…). What the command does reaches its owner on cards in
// the command's conversation: a sign-in code it prints on a device_code card only the owner
// sees; a page it opens through BROWSER or xdg-open goes to OpenCLISignIn, which opens it in
// the node's own tab with the usual sign-in card. The code is on the card and in the command's
// output, never in a log line or a ledger event.

// DeviceCodeType is the data.type of a sign-in code's card.
const DeviceCodeType = "device_code"

// Device code card statuses: pending until its command ends, then done (exit 0) or expired.
const (
	DeviceCodePending = "pending"
	DeviceCodeDone    = "done"
	DeviceCodeExpired = "expired"
)

// DeviceCodeLife is how long a code holds when its command does not say.
const DeviceCodeLife = 15 * time.Minute

// signInPromptWait is how long a sign-in started in the background is waited for before its
// answer, so the node hears whether its owner was asked (its code or page comes in a second or
// two).
const signInPromptWait = 5 * time.Second

// DeviceCodeCard is the data of a device_code text message.
type DeviceCodeCard struct {
	Type      string    `json:"type"`
	Status    string    `json:"status"`
	URL       string    `json:"url"`
	Code      string    `json:"code,omitempty"`
	Command   string    `json:"command"`
	Operation string    `json:"operation"` // the command's id (cmd_…)
	NodeID    string    `json:"nodeId"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// CLISignIn is a page a node's command asked a browser to open: an https page on the public
// web or one of this computer's own addresses (computer.OpenableURL), in the command's
// conversation.
type CLISignIn struct {
	NodeID  string
	RoomID  string
	Lane    string
	Private bool
	TurnID  string
	// CommandID is the command's id (cmd_…); Command its line; Which the known sign-in it runs
	// ("az login"), or "".
	CommandID, Command, Which string
	URL                       string
	// ExpiresAt is when the command reaches its limit: the sign-in card's end.
	ExpiresAt time.Time
}

// OpenCLISignIn opens a command's sign-in page for its owner: in the node's own tab, with the
// sign-in card (source: "cli") in the command's conversation. Config.OpenCLISignIn overrides the
// service's own (openCLISignIn, where a browser broker runs); without either the page is only
// recorded.
type OpenCLISignIn func(ctx context.Context, in CLISignIn) error

// cliWatch follows one command of a node for what it asks of the owner.
type cliWatch struct {
	s       *Service
	t       Turn
	n       Node
	command string
	which   string // the known sign-in it runs, or ""
	limit   time.Duration

	asked     chan struct{} // closed when the owner was first asked (a card, a page)
	askedOnce sync.Once

	mu    sync.Mutex // guards the following
	card  string     // the device_code card's message id
	pages []string   // the pages it opened, for the record
}

func (s *Service) watchCommand(t Turn, n Node, command, which string, limit time.Duration) *cliWatch {
	return &cliWatch{s: s, t: t, n: n, command: command, which: which, limit: limit, asked: make(chan struct{})}
}

func (w *cliWatch) told() { w.askedOnce.Do(func() { close(w.asked) }) }

// askedOwner reports whether the owner got a card of this command.
func (w *cliWatch) askedOwner() bool {
	select {
	case <-w.asked:
		return true
	default:
		return false
	}
}

// deviceCode posts the command's code card, or puts a newer code on it: one card a command.
func (w *cliWatch) deviceCode(cmdID string, dc computer.DeviceCode) {
	life := dc.ExpiresIn
	if life <= 0 {
		life = DeviceCodeLife
	}
	s := w.s
	card := DeviceCodeCard{Type: DeviceCodeType, Status: DeviceCodePending, URL: dc.URL, Code: dc.Code,
		Command: oneLineOf(w.command, 300), Operation: cmdID, NodeID: w.n.ID, ExpiresAt: s.now().Add(life)}
	data, _ := json.Marshal(card)
	body := deviceCodeText(card)
	w.mu.Lock()
	defer w.mu.Unlock()
	err := s.cfg.Writer.Exec(s.life, func(tx *ledger.Tx) error {
		if w.card != "" {
			m, err := s.messageIn(tx.Context(), tx, w.card)
			if err != nil {
				return err
			}
			m.Body, m.Data = body, data
			return s.updateMessageTx(tx, m)
		}
		m, err := s.insertMessageTx(tx, Message{RoomID: roomOfLane(w.t.Lane, w.t.RoomID), Author: AuthorNode, NodeID: w.n.ID,
			Kind: KindText, Body: body, Data: data, Private: true, Depth: w.t.Depth + 1, TurnID: w.t.ID})
		if err == nil {
			w.card = m.ID
		}
		return err
	})
	if err != nil {
		// The command and host only: the code stays on the card.
		s.log.Warn("node: a sign-in code's card", "command", cmdID, "host", hostOfURL(dc.URL), "err", err)
		return
	}
	w.told()
}

// deviceCodeText is the card's text: the page and the code, as the owner reads them.
func deviceCodeText(c DeviceCodeCard) string {
	what := "`" + oneLineOf(c.Command, 80) + "`"
	if c.Code == "" {
		return fmt.Sprintf("To sign in for %s, open %s and sign in there.", what, c.URL)
	}
	return fmt.Sprintf("To sign in for %s, open %s and enter the code %s (it holds until %s).", what, c.URL, c.Code, c.ExpiresAt.Format("15:04"))
}

// browserURL hands a page the command opened to the node's sign-in.
func (w *cliWatch) browserURL(cmdID, u string) {
	w.mu.Lock()
	w.pages = append(w.pages, u)
	w.mu.Unlock()
	in := CLISignIn{NodeID: w.n.ID, RoomID: roomOfLane(w.t.Lane, w.t.RoomID), Lane: w.t.Lane, Private: w.t.Private, TurnID: w.t.ID,
		CommandID: cmdID, Command: w.command, Which: w.which, URL: u, ExpiresAt: w.s.now().Add(w.limit)}
	if w.s.cliSignIn(w.s.life, in) {
		w.told()
	}
}

// cliSignIn records a page a node's command opened and gives it to OpenCLISignIn; it reports
// whether the owner was asked.
func (s *Service) cliSignIn(ctx context.Context, in CLISignIn) bool {
	// Where it points, never its query: a sign-in's state and codes ride there.
	s.log.Info("node: a command opened a page", "node", in.NodeID, "command", in.CommandID, "signIn", in.Which, "host", hostOfURL(in.URL))
	open := s.cfg.OpenCLISignIn
	if open == nil && s.cfg.Browser != nil {
		open = func(ctx context.Context, in CLISignIn) error { _, err := s.openCLISignIn(ctx, in); return err }
	}
	if open == nil {
		return false
	}
	if err := open(ctx, in); err != nil {
		s.log.Warn("node: open a command's sign-in page", "command", in.CommandID, "host", hostOfURL(in.URL), "err", err)
		return false
	}
	return true
}

// finished settles the code card when the command ends: done when it exited 0, else expired.
func (w *cliWatch) finished(r computer.Result) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.card == "" {
		return
	}
	status := DeviceCodeExpired
	if r.ExitCode == 0 && !r.Stopped && !r.TimedOut {
		status = DeviceCodeDone
	}
	s := w.s
	err := s.cfg.Writer.Exec(s.life, func(tx *ledger.Tx) error {
		m, err := s.messageIn(tx.Context(), tx, w.card)
		if err != nil {
			return err
		}
		var c DeviceCodeCard
		if json.Unmarshal(m.Data, &c) != nil || c.Type != DeviceCodeType || c.Status != DeviceCodePending {
			return ledger.ErrNoChange
		}
		c.Status = status
		m.Data, _ = json.Marshal(c)
		return s.updateMessageTx(tx, m)
	})
	if err != nil {
		s.log.Warn("node: settle a sign-in code's card", "command", r.ID, "err", err)
	}
}

// quiet reports whether the command's end wakes no one: a sign-in that ran out of time after
// its owner was asked (its card already says it expired).
func (w *cliWatch) quiet(r computer.Result) bool {
	return w.which != "" && w.askedOwner() && r.TimedOut
}

// signInNote is what the node reads when its owner was asked for a command's sign-in.
const signInNote = "Your owner got it on a card in this chat (the page to open, and the code if there is one); it goes on in the background, and you hear when it ends. " +
	"You may say the code if they ask; never repeat it in a room with other people."

func hostOfURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return ""
}

// terminalShim gives a node's terminal the browser helper its commands run with (spec 002
// §8.16.4): a page opened in it goes to OpenCLISignIn in the node's chat with its owner, where
// its computer tools are. stop, called when the terminal ends, removes the helper.
func (s *Service) terminalShim(o terminal.StartOptions, n Node) (terminal.StartOptions, func()) {
	if s.cfg.Computer == nil {
		return o, func() {}
	}
	id := "terminal:" + ledger.NewID("")
	env, stop, err := s.cfg.Computer.BrowserShim(os.Getenv("PATH"), func(u string) {
		s.cliSignIn(s.life, CLISignIn{NodeID: n.ID, RoomID: n.DMRoomID, Lane: convLane(n.DMRoomID, true), Private: true,
			CommandID: id, Command: "a terminal", URL: u, ExpiresAt: s.now().Add(TerminalMaxAge)})
	})
	if err != nil {
		s.log.Warn("node: no browser helper for a terminal", "node", n.Slug, "err", err)
		return o, func() {}
	}
	o.Env = append(slices.Clone(o.Env), env...)
	return o, stop
}

// expireDeviceCodes marks expired the code cards still pending from before a start: their
// commands ended with the process that ran them.
func (s *Service) expireDeviceCodes(ctx context.Context) error {
	return s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		rows, err := tx.QueryContext(tx.Context(), "SELECT "+msgCols+" FROM node_messages WHERE kind = 'text' AND json_extract(data, '$.type') = ? AND json_extract(data, '$.status') = ?",
			DeviceCodeType, DeviceCodePending)
		if err != nil {
			return fmt.Errorf("node: read sign-in code cards: %w", err)
		}
		var ms []Message
		for rows.Next() {
			m, err := scanMessage(rows)
			if err != nil {
				rows.Close()
				return err
			}
			ms = append(ms, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, m := range ms {
			var c DeviceCodeCard
			if json.Unmarshal(m.Data, &c) != nil {
				continue
			}
			c.Status = DeviceCodeExpired
			m.Data, _ = json.Marshal(c)
			if err := s.updateMessageTx(tx, m); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeviceCodeReplaced is a code card whose command a newer run of the same sign-in replaced.
const DeviceCodeReplaced = "replaced"

// replaceSignIns stops the node's older runs of the same sign-in still going (one attempt at a
// time: the owner answers the newest card), and marks their code cards replaced.
func (s *Service) replaceSignIns(ctx context.Context, nodeID, which string) {
	for _, r := range s.cfg.Computer.Running(nodeID) {
		if computer.SignInCommand(r.Command) != which {
			continue
		}
		if _, err := s.cfg.Computer.Stop(nodeID, r.ID); err != nil {
			s.log.Warn("node: stop an older sign-in", "command", r.ID, "err", err)
			continue
		}
		err := s.cfg.Writer.Exec(context.WithoutCancel(ctx), func(tx *ledger.Tx) error {
			var id string
			err := tx.QueryRowContext(tx.Context(), "SELECT id FROM node_messages WHERE kind = 'text' AND json_extract(data, '$.type') = ? AND json_extract(data, '$.operation') = ?",
				DeviceCodeType, r.ID).Scan(&id)
			if err != nil {
				return ledger.ErrNoChange // it printed no code
			}
			m, err := s.messageIn(tx.Context(), tx, id)
			if err != nil {
				return err
			}
			var c DeviceCodeCard
			json.Unmarshal(m.Data, &c)
			c.Status = DeviceCodeReplaced
			m.Data, _ = json.Marshal(c)
			m.Body += " Replaced by a newer sign-in."
			return s.updateMessageTx(tx, m)
		})
		if err != nil && !errors.Is(err, ledger.ErrNoChange) {
			s.log.Warn("node: mark an older sign-in's card replaced", "command", r.ID, "err", err)
		}
	}
}
