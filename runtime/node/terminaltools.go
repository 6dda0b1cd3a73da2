package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/terminal"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// The terminal tools (spec 002 §8.17, §8.13): a node keeps shells open in its own folder and
// types into them across calls, every line judged by the terminal's floor (judge.JudgeTerminal)
// before its Enter; computer_terminal_screenshot runs one command in a terminal and keeps a
// picture of its screen.
const (
	ToolTerminalOpen       = "terminal_open"
	ToolTerminalSend       = "terminal_send"
	ToolTerminalRead       = "terminal_read"
	ToolTerminalClose      = "terminal_close"
	ToolTerminalScreenshot = "computer_terminal_screenshot"
)

var terminalTools = []string{ToolTerminalOpen, ToolTerminalSend, ToolTerminalRead, ToolTerminalClose, ToolTerminalScreenshot, ToolLiveView}

func init() {
	for _, name := range terminalTools {
		ownerOnly[name] = true
		if name != ToolTerminalRead {
			actingTools[name] = true
		}
	}
}

// Terminal limits (spec 002 §8.17).
const (
	TerminalsPerNode = 3
	TerminalIdle     = 30 * time.Minute
	TerminalMaxAge   = 4 * time.Hour
	terminalCols     = 120
	terminalRows     = 32
	maxSendText      = 8000
	maxSendKeys      = 40
	maxWait          = 60 * time.Second
	maxReadLines     = terminal.Scrollback
	maxShotSeconds   = 30
)

// terminalWordsRe finds a turn that may need a terminal.
var terminalWordsRe = regexp.MustCompile(`(?i)\b(terminals?|shells?|commands?|command line|cli|bash|zsh|run|htop|top|less|vim?|nano|ssh|screenshots?|processes|install|tty|console|prompt)\b`)

// terminalToolsFor are the terminal tools a turn offers: only in turns the owner started, whose
// words speak of a terminal or a command, or that carry on work.
func terminalToolsFor(t Turn, text string) []string {
	if !t.ByOwner || t.Reason == ReasonMessage && !terminalWordsRe.MatchString(text) {
		return nil
	}
	return terminalTools
}

type terminalOpenIn struct {
	Live   bool   `json:"live,omitempty" jsonschema:"also show it to your owner live, on a card in this chat (as live_view does)"`
	Folder string `json:"folder,omitempty" jsonschema:"where it starts; your own folder when left out (another asks your owner once)" check:"maxLength=1000"`
}

type terminalSendIn struct {
	Session string   `json:"session" jsonschema:"the terminal's id (ts…)" check:"minLength=1,maxLength=40"`
	Text    string   `json:"text,omitempty" jsonschema:"text to type; a new line is Enter" check:"maxLength=32000"`
	Keys    []string `json:"keys,omitempty" jsonschema:"named keys typed after the text: Enter, Tab, Up, Down, Left, Right, Home, End, Backspace, Escape, Ctrl+C, Ctrl+D, Ctrl+L, Ctrl+Z, q, F1–F12" check:"maxItems=40,items.maxLength=20"`
	WaitMs  int      `json:"waitMs,omitempty" jsonschema:"longest wait for the prompt (3000 after an Enter, 1000 otherwise)" check:"minimum=0,maximum=60000"`
}

type terminalReadIn struct {
	Session string `json:"session" jsonschema:"the terminal's id (ts…)" check:"minLength=1,maxLength=40"`
	Lines   int    `json:"lines,omitempty" jsonschema:"the last lines, with the scrollback; the screen when left out" check:"minimum=0,maximum=1000"`
}

type terminalCloseIn struct {
	Session string `json:"session" jsonschema:"the terminal's id (ts…)" check:"minLength=1,maxLength=40"`
}

type terminalShotIn struct {
	Command string   `json:"command" jsonschema:"the command to run, such as htop or npm test" check:"minLength=1,maxLength=2000"`
	Seconds int      `json:"seconds,omitempty" jsonschema:"how long it runs before the picture (3 by default)" check:"minimum=1,maximum=30"`
	Keys    []string `json:"keys,omitempty" jsonschema:"named keys typed before the picture, such as F5, q or Enter" check:"maxItems=40,items.maxLength=20"`
}

// TerminalAnswer is what the terminal tools answer.
type TerminalAnswer struct {
	Session string `json:"session,omitempty"`
	Folder  string `json:"folder,omitempty"`
	Screen  string `json:"screen"`
	// Prompt says the shell's prompt came back before the answer.
	Prompt bool   `json:"prompt,omitempty"`
	Ended  bool   `json:"ended,omitempty"`
	Note   string `json:"note,omitempty"`
	Image  string `json:"image,omitempty"` // the screenshot's path
}

func terminalToolDefs(def func(name, desc string) tools.Tool) []tools.Tool {
	run := func(f func(ctx context.Context, c *turnCtx) (TerminalAnswer, error)) func(ctx context.Context, tc *tools.ToolContext) (tools.Result, error) {
		return func(ctx context.Context, tc *tools.ToolContext) (tools.Result, error) {
			c, err := computerTurn(tc) // the terminals are the computer's, with its tools' rules
			if err != nil {
				return tools.Result{}, err
			}
			a, err := f(ctx, c)
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Summary: a.summary(), Data: a}, nil
		}
	}
	return []tools.Tool{
		tools.Define(def(ToolTerminalOpen, "Open a shell in your own folder on your owner's computer; answers its id and screen. At most 3 open."),
			tools.Typed[terminalOpenIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in terminalOpenIn) (tools.Result, error) {
				return run(func(ctx context.Context, c *turnCtx) (TerminalAnswer, error) {
					a, err := c.s.terminalOpenFor(ctx, tc, in.Folder)
					if err != nil || !in.Live {
						return a, err
					}
					t, err := c.s.term(c.node, a.Session)
					if err != nil {
						return a, err
					}
					live, err := c.s.postLive(ctx, c.rt.turn, c.node, t)
					if err != nil {
						return a, err
					}
					a.Note = live.Note
					return a, nil
				})(ctx, tc)
			}}),
		tools.Define(def(ToolTerminalSend, "Type into your terminal: text (a new line is Enter), then named keys; answers the screen when the prompt is back. Each line is checked first."),
			tools.Typed[terminalSendIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in terminalSendIn) (tools.Result, error) {
				return run(func(ctx context.Context, c *turnCtx) (TerminalAnswer, error) {
					return c.s.terminalSend(ctx, c.node, in)
				})(ctx, tc)
			}}),
		tools.Define(def(ToolTerminalRead, "Read your terminal's screen, or its last lines with the scrollback."),
			tools.Typed[terminalReadIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in terminalReadIn) (tools.Result, error) {
				return run(func(ctx context.Context, c *turnCtx) (TerminalAnswer, error) { return c.s.terminalRead(c.node, in) })(ctx, tc)
			}}),
		tools.Define(def(ToolTerminalClose, "Close your terminal."),
			tools.Typed[terminalCloseIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in terminalCloseIn) (tools.Result, error) {
				return run(func(ctx context.Context, c *turnCtx) (TerminalAnswer, error) {
					return c.s.terminalClose(c.node, in.Session)
				})(ctx, tc)
			}}),
		tools.Define(def(ToolTerminalScreenshot, "Run a command in a terminal (120×32) for some seconds, type keys if given, and keep a PNG of its screen in your folder with its text: htop, top, a build."),
			tools.Typed[terminalShotIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in terminalShotIn) (tools.Result, error) {
				return run(func(ctx context.Context, c *turnCtx) (TerminalAnswer, error) {
					a, err := c.s.terminalScreenshot(ctx, c.node, in)
					if err != nil || a.Image == "" || c.s.cfg.Computer == nil {
						return a, err
					}
					// The picture shows with the node's reply, kept as its evidence (spec 002 §8.14).
					if _, err := c.s.shareFile(ctx, c, a.Image, "Terminal: "+oneLineOf(in.Command, 120)); err != nil {
						a.Note = strings.TrimSpace(a.Note + " The picture could not be shown in the chat: " + err.Error())
					} else {
						a.Note = strings.TrimSpace(a.Note + " The picture is shown to your owner in the chat.")
					}
					return a, nil
				})(ctx, tc)
			}}),
	}
}

func (a TerminalAnswer) summary() string {
	var b strings.Builder
	if a.Session != "" {
		fmt.Fprintf(&b, "Terminal %s", a.Session)
		if a.Folder != "" {
			fmt.Fprintf(&b, " in %s", a.Folder)
		}
		b.WriteString(".")
	}
	if a.Image != "" {
		fmt.Fprintf(&b, " Picture: %s.", a.Image)
	}
	if a.Ended {
		b.WriteString(" The shell has ended.")
	}
	if a.Note != "" {
		b.WriteString(" " + a.Note)
	}
	fmt.Fprintf(&b, "\nScreen:\n%s", a.Screen)
	return strings.TrimSpace(b.String())
}

// nodeTerminals are the terminals the nodes keep open, by session id.
type nodeTerminals struct {
	mu   sync.Mutex // guards the following field
	byID map[string]*nodeTerm
}

// nodeTerm is one node's terminal, what its judge knows of it, and the owner's views of it.
type nodeTerm struct {
	nodeID string
	title  string // "bash in ‹folder›"
	sess   *terminal.Session
	idle   *time.Timer
	// closedByNode says terminal_close ended it; ownerTyped that the owner typed in it, so the
	// judge no longer knows the line at the prompt.
	closedByNode, ownerTyped atomic.Bool
	// waiting counts the node's sends waiting for the owner to hand control back.
	waiting atomic.Int32

	mu    sync.Mutex // one send at a time; guards the following field
	state judge.TermState

	liveMu sync.Mutex // one change of the live card at a time (liveview.go)
	liveControl
}

// waitControl waits while the owner controls the terminal, and says whether it did.
func (t *nodeTerm) waitControl(ctx context.Context) (bool, error) {
	if t.controlled() == nil {
		return false, nil
	}
	t.waiting.Add(1)
	defer t.waiting.Add(-1)
	return t.waitBack(ctx, errors.New("Your owner has taken control of this terminal; wait for them to hand it back."))
}

// nodeFolder is the node's own folder, made on first use (spec 002 §8.13).
func (s *Service) nodeFolder(n Node) (string, error) {
	if s.cfg.Computer == nil || s.cfg.Terminals == nil {
		return "", errors.New("Terminals are not available on this computer.")
	}
	return s.cfg.Computer.NodeFolder(n.Slug)
}

// floorFor is the judge's floor for commands in the node's folder.
func (s *Service) floorFor(folder string) judge.Settings { return s.cfg.Computer.Floor(folder) }

// sandboxed starts a node's shell inside the OS sandbox its commands run in, able to change its
// own folder only.
func (s *Service) sandboxed(o terminal.StartOptions, write []string) (terminal.StartOptions, error) {
	var err error
	o.Shell, o.Args, err = s.cfg.Computer.WrapShell(o.Folder, write, o.Shell, o.Args)
	o.Drop = computer.DropVar
	return o, err
}

// hide hides saved secrets in what a node reads of its computer, as the computer's tools do.
func (s *Service) hide(text string) string {
	if s.cfg.Computer == nil {
		return text
	}
	return s.cfg.Computer.Hide(text)
}

// shellStart is how a node's shell starts: bash (else sh) without the owner's start-up files,
// history file or key bindings, so every line it runs is one the judge saw, with the prompt
// mark that says when a command is done.
func shellStart(folder string) terminal.StartOptions {
	env := []string{"HISTFILE=/dev/null", "INPUTRC=/dev/null", "PROMPT_COMMAND=", "BASH_ENV=", "ENV="}
	o := terminal.StartOptions{Folder: folder, Cols: terminalCols, Rows: terminalRows}
	if sh, err := exec.LookPath("bash"); err == nil {
		o.Shell, o.Args = sh, []string{"--noprofile", "--norc", "-i"}
		o.Env = append(env, `PS1=\[`+terminal.PromptMark+`\]\w\$ `)
		return o
	}
	o.Shell, o.Args = "/bin/sh", []string{"-i"}
	o.Env = append(env, "PS1="+terminal.PromptMark+"$ ")
	return o
}

// terminalOpenFor opens a terminal in the folder a call names, through the decision order: its
// own folder goes ahead, another waits on a computer card like any command there.
func (s *Service) terminalOpenFor(ctx context.Context, tc *tools.ToolContext, folder string) (TerminalAnswer, error) {
	var a TerminalAnswer
	_, err := computerDo(ctx, tc, ToolTerminalOpen, func(c *turnCtx, dir string) (computer.Call, error) {
		return computer.Call{Op: computer.OpRun, Folder: dir, Command: "cd ."}, nil
	}, folder, func(c *turnCtx, call computer.Call, d computer.Decision) (tools.Result, error) {
		var err error
		a, err = s.terminalOpenAt(ctx, c.node, call.Folder, d.Write)
		return tools.Result{}, err
	})
	return a, err
}

// terminalOpen opens a terminal in the node's own folder.
func (s *Service) terminalOpen(ctx context.Context, n Node) (TerminalAnswer, error) {
	folder, err := s.nodeFolder(n)
	if err != nil {
		return TerminalAnswer{}, err
	}
	return s.terminalOpenAt(ctx, n, folder, nil)
}

// terminalOpenAt opens a shell in folder, in the OS sandbox with write changeable besides it.
func (s *Service) terminalOpenAt(ctx context.Context, n Node, folder string, write []string) (TerminalAnswer, error) {
	if _, err := s.nodeFolder(n); err != nil {
		return TerminalAnswer{}, err
	}
	// Counting and starting under one lock: two opens at once cannot pass the limit together.
	s.terms.mu.Lock()
	open := 0
	for _, t := range s.terms.byID {
		if t.nodeID == n.ID {
			open++
		}
	}
	if open >= TerminalsPerNode {
		s.terms.mu.Unlock()
		return TerminalAnswer{}, problem.Conflict("You have %d terminals open, the most you may; close one with terminal_close first.", open)
	}
	start := shellStart(folder)
	// The browser helper's folder is made first: the sandbox shows only folders that are there.
	withShim, stopShim := s.terminalShim(start, n)
	o, err := s.sandboxed(withShim, write)
	if err != nil {
		stopShim()
		s.terms.mu.Unlock()
		return TerminalAnswer{}, err
	}
	o.Node, o.MaxAge = n.ID, TerminalMaxAge // kept by its host, should the runtime stop first
	sess, err := s.cfg.Terminals.Start(o)
	if err != nil {
		stopShim()
		s.terms.mu.Unlock()
		return TerminalAnswer{}, fmt.Errorf("open a terminal: %w", err)
	}
	go func() { <-sess.Done(); stopShim() }()
	s.keepTermLocked(n.ID, n.Slug, filepath.Base(start.Shell)+" in "+filepath.Base(folder), sess, judge.TermState{})
	s.terms.mu.Unlock()
	s.noteLive(KindTerminalSession, LiveStep{Step: "opened", NodeID: n.ID, Session: sess.ID(), Kind: "terminal"})
	sess.Settle(ctx, 0, 100*time.Millisecond, 5*time.Second)
	return TerminalAnswer{Session: sess.ID(), Folder: folder, Screen: s.hide(sess.Tail(0))}, nil
}

// keepTermLocked keeps sess as the node's terminal until it ends: closed after TerminalIdle
// without a send, or TerminalMaxAge after it started. s.terms.mu is held.
func (s *Service) keepTermLocked(nodeID, slug, title string, sess *terminal.Session, state judge.TermState) {
	t := &nodeTerm{nodeID: nodeID, sess: sess, title: title, state: state,
		liveControl: liveControl{busy: "Another view has control of this terminal; hand it back there first."}}
	t.idle = time.AfterFunc(TerminalIdle, func() { sess.Close() })
	age := time.AfterFunc(max(0, TerminalMaxAge-time.Since(sess.Info().StartedAt)), func() { sess.Close() })
	if s.terms.byID == nil {
		s.terms.byID = map[string]*nodeTerm{}
	}
	s.terms.byID[sess.ID()] = t
	go func() {
		<-sess.Done()
		t.idle.Stop()
		age.Stop()
		s.terms.mu.Lock()
		delete(s.terms.byID, sess.ID())
		s.terms.mu.Unlock()
		s.terminalEnded(t)
		s.log.Info("node terminal ended", "node", slug, "session", sess.ID(), "exit", sess.ExitCode())
		if s.life.Err() == nil { // a runtime stopping lets its terminals go on in their hosts
			s.noteLive(KindTerminalSession, LiveStep{Step: "closed", NodeID: t.nodeID, Session: sess.ID(), Kind: "terminal"})
		}
	}()
}

// term is the node's open terminal id.
func (s *Service) term(n Node, id string) (*nodeTerm, error) {
	s.terms.mu.Lock()
	t := s.terms.byID[strings.TrimSpace(id)]
	s.terms.mu.Unlock()
	if t == nil || t.nodeID != n.ID {
		return nil, problem.NotFound("You have no terminal %q open; terminal_open starts one.", id)
	}
	return t, nil
}

func (s *Service) terminalSend(ctx context.Context, n Node, in terminalSendIn) (TerminalAnswer, error) {
	t, err := s.term(n, in.Session)
	if err != nil {
		return TerminalAnswer{}, err
	}
	if c := utf8.RuneCountInString(in.Text); c > maxSendText {
		return TerminalAnswer{}, problem.Invalid("%d characters is more than one send takes (%d); send the text in parts.", c, maxSendText)
	}
	if len(in.Keys) > maxSendKeys {
		return TerminalAnswer{}, problem.Invalid("%d keys is more than one send takes (%d); send them in parts.", len(in.Keys), maxSendKeys)
	}
	waited, err := t.waitControl(ctx)
	if err != nil {
		return TerminalAnswer{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	full := t.sess.AltScreen()
	if t.ownerTyped.Swap(false) {
		t.state.Unknown = true // the owner typed at the prompt: the line there is not the judge's
	}
	st := t.state
	st.FullScreen = full
	folder := t.sess.Info().Folder
	v := judge.JudgeTerminal(judge.TermInput{Text: in.Text, Keys: in.Keys}, st, s.floorFor(folder))
	switch v.Decision {
	case judge.TermSudo, judge.TermRefuse:
		s.log.Info("node terminal line refused", "node", n.Slug, "session", in.Session, "decision", v.Decision.String())
		return TerminalAnswer{}, fmt.Errorf("Nothing was typed: %s", v.Reason)
	}
	t.idle.Reset(TerminalIdle)
	prompts := t.sess.Prompts()
	enter := false
	written := 0
	for i, step := range v.Steps {
		b := []byte(step.Text)
		if step.Key != "" {
			enter = enter || step.Key == "Enter"
			b, _ = terminal.KeyBytes(step.Key, t.sess.AppCursor())
		}
		if _, err := t.sess.Write(b); err != nil {
			t.state = v.State
			return TerminalAnswer{Session: in.Session, Screen: s.hide(t.sess.Tail(0)), Ended: true}, nil
		}
		written = i + 1
		if full && i+1 < len(v.Steps) {
			// Keys for a full-screen program are typed one by one: once it ends, the rest would
			// reach the shell's line, judged as the program's.
			t.sess.Settle(ctx, -1, 30*time.Millisecond, 500*time.Millisecond)
			if !t.sess.AltScreen() {
				break
			}
		}
	}
	for _, line := range v.State.Done[min(len(st.Done), len(v.State.Done)):] {
		// Ledgered by its program only, never the line (spec 002 §8.17: node.tool.terminal_line).
		s.emitComputer(ctx, n.ID, ComputerTool{NodeID: n.ID, Tool: "terminal_line", Folder: folder, Program: programOf(line), Rung: string(computer.RungOwn)})
	}
	t.state = v.State
	wait := time.Second
	if enter {
		wait = 3 * time.Second
	}
	if in.WaitMs > 0 {
		wait = min(time.Duration(in.WaitMs)*time.Millisecond, maxWait)
	}
	a := TerminalAnswer{Session: in.Session}
	if enter && !full {
		a.Prompt = t.sess.Settle(ctx, prompts, 150*time.Millisecond, wait)
	} else {
		t.sess.Settle(ctx, -1, 300*time.Millisecond, wait)
	}
	var notes []string
	if v.Cleared {
		notes = append(notes, "The line at the prompt was cleared first, as Ensemble could not tell what it held.")
	}
	if written < len(v.Steps) {
		notes = append(notes, fmt.Sprintf("The program ended after %d of %d steps; the rest were not typed.", written, len(v.Steps)))
	}
	if waited {
		notes = append(notes, "Your owner had control of this terminal; they have handed it back, so read the screen before going on.")
	}
	a.Note = strings.Join(notes, " ")
	select {
	case <-t.sess.Done():
		a.Ended = true
	default:
	}
	a.Screen = s.hide(t.sess.Tail(0))
	return a, nil
}

func (s *Service) terminalRead(n Node, in terminalReadIn) (TerminalAnswer, error) {
	t, err := s.term(n, in.Session)
	if err != nil {
		return TerminalAnswer{}, err
	}
	return TerminalAnswer{Session: in.Session, Screen: s.hide(t.sess.Tail(min(in.Lines, maxReadLines)))}, nil
}

func (s *Service) terminalClose(n Node, id string) (TerminalAnswer, error) {
	t, err := s.term(n, id)
	if err != nil {
		return TerminalAnswer{}, err
	}
	screen := s.hide(t.sess.Tail(0))
	t.closedByNode.Store(true)
	// Gone for the node at once; its end is noted when the session is done.
	s.terms.mu.Lock()
	delete(s.terms.byID, id)
	s.terms.mu.Unlock()
	t.sess.Close()
	return TerminalAnswer{Session: id, Screen: screen, Ended: true, Note: "Closed."}, nil
}

// terminalScreenshot runs one command in a terminal of its own and keeps a picture of its screen.
func (s *Service) terminalScreenshot(ctx context.Context, n Node, in terminalShotIn) (TerminalAnswer, error) {
	folder, err := s.nodeFolder(n)
	if err != nil {
		return TerminalAnswer{}, err
	}
	floor := s.floorFor(folder)
	if v := judge.JudgeTerminal(judge.TermInput{Text: in.Command + "\n"}, judge.TermState{}, floor); v.Decision != judge.TermAllow {
		return TerminalAnswer{}, fmt.Errorf("Nothing was run: %s", v.Reason)
	}
	// The keys go to the program, as to a full-screen one; a line they type is judged all the same.
	keys := judge.JudgeTerminal(judge.TermInput{Keys: in.Keys}, judge.TermState{FullScreen: true}, floor)
	if keys.Decision != judge.TermAllow {
		return TerminalAnswer{}, fmt.Errorf("Nothing was run: %s", keys.Reason)
	}
	o := shellStart(folder)
	o.Args = o.Args[:len(o.Args)-1] // not interactive (no -i): the shell runs the command
	o.Command = in.Command
	if o, err = s.sandboxed(o, nil); err != nil {
		return TerminalAnswer{}, err
	}
	sess, err := s.cfg.Terminals.Start(o)
	if err != nil {
		return TerminalAnswer{}, fmt.Errorf("start %q in a terminal: %w", in.Command, err)
	}
	defer sess.Close()
	secs := 3
	if in.Seconds > 0 {
		secs = min(in.Seconds, maxShotSeconds)
	}
	select {
	case <-sess.Done():
	case <-time.After(time.Duration(secs) * time.Second):
	case <-ctx.Done():
		return TerminalAnswer{}, ctx.Err()
	}
	for _, step := range keys.Steps {
		b := []byte(step.Text)
		if step.Key != "" {
			b, _ = terminal.KeyBytes(step.Key, sess.AppCursor())
		}
		if _, err := sess.Write(b); err != nil {
			break
		}
		sess.Settle(ctx, -1, 50*time.Millisecond, time.Second)
	}
	raw := sess.Tail(0)
	a := TerminalAnswer{Screen: s.hide(raw)}
	if a.Screen != raw {
		a.Note = "The screen showed a saved secret, so no picture was kept; its text has it hidden."
		return a, nil
	}
	dir := filepath.Join(folder, "screenshots")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return TerminalAnswer{}, fmt.Errorf("make the screenshots folder: %w", err)
	}
	path := filepath.Join(dir, "terminal-"+time.Now().UTC().Format("20060102-150405.000")+".png")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return TerminalAnswer{}, fmt.Errorf("save the screenshot: %w", err)
	}
	if _, _, err := sess.WritePNG(f); err != nil {
		f.Close()
		os.Remove(path)
		return TerminalAnswer{}, fmt.Errorf("draw the screenshot: %w", err)
	}
	if err := f.Close(); err != nil {
		return TerminalAnswer{}, fmt.Errorf("save the screenshot: %w", err)
	}
	a.Image = path
	return a, nil
}
