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
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/profiles"
)

// runFlags are the flags of `ensemble run`.
type runFlags struct {
	agent, folder, task, mode, model, effort, git, outside string
	cont, repo, profile                                    string
	folderSet                                              bool                   // --folder was given
	given                                                  func(flag string) bool // whether a flag was given; nil: none
	newSession                                             bool
	worktree, workspace, trusted, detach                   bool
	noSandbox, noInternet, askBeforeCommit                 bool
	maxMinutes, maxTurns                                   int
}

func newRunCmd(g *globals) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   `run "WHAT TO DO" --agent AGENT`,
		Short: "Give a task to your coding agent and follow it here",
		Long: `Run creates a task from what you say, assigns it to your own coding agent (Claude Code,
Codex, …) in a folder on this computer, and follows the run here: one line per step, the
tool calls with a short preview of their input and how they ended, the agent's messages,
and a summary with tokens and cost at the end.

Every tool call the agent wants to make goes to Ensemble's judge under the run's mode:
  ask         edits and commands wait for you (the default)
  review      the agent works freely inside the folder; you review at the end
  unattended  the agent works on its own; questions take their recommended answer
When the judge asks you, the question appears here and you answer it inline by typing
its number (Enter alone chooses nothing), or from the window, a phone, or 'ensemble needs';
the first answer wins, and one given elsewhere takes the question off this terminal.

The run works in the folder you name (default: this one), in a git worktree of it on a
new branch ensemble/<id> (--worktree), or in a fresh folder of its own (--workspace). One
run at a time works in a folder; others wait their turn.

A run profile (--profile NAME, saved in the window) gives the agent, folder and settings
the flags leave out; without --agent, --profile or --continue the default profile is
used (the starred one, else the first saved).

Ctrl-C stops the run. With --detach the command returns once the run is assigned.`,
		Example: `  ensemble run "Fix the flaky login test" --agent claude
  ensemble run "Add a README" --agent claude --folder ~/code/app --mode review
  ensemble run "Try the new parser" --agent codex --worktree --git commit --max-minutes 30
  ensemble run --task tsk_0123456789abcdef --agent claude --detach
  ensemble run "Tidy the imports" --profile careful --mode review`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case f.task != "" && len(args) > 0:
				return errors.New("Give either what to do or --task, not both.")
			case f.task == "" && (len(args) != 1 || strings.TrimSpace(args[0]) == ""):
				return errors.New(`Say what to do in one argument, for example: ensemble run "Fix the login retry" --agent claude.`)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.folderSet = cmd.Flags().Changed("folder")
			f.given = cmd.Flags().Changed
			if f.profile != "" && f.cont != "" {
				return errors.New("--profile does not go with --continue: a continued run keeps its session's agent and folder.")
			}
			c, err := connect(cmd.Context(), g)
			if err != nil {
				return err
			}
			prof, err := f.pickProfile(cmd.Context(), c)
			if err != nil {
				return err
			}
			req, err := f.request(args, prof)
			if err != nil {
				return err
			}
			var job jobs.Job
			if err := c.do(cmd.Context(), "POST", "/api/agent/assign", req, &job); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if prof != nil {
				fmt.Fprintf(out, "Under the run profile “%s”.\n", prof.Name)
			}
			fmt.Fprintf(out, "Run %s: %s in %s (%s).\n", job.ID, job.Agent, job.WorkDir, job.Settings.Mode)
			if f.detach {
				fmt.Fprintf(out, "Follow it with the window, or stop it: POST /api/agent/jobs/%s/stop.\n", job.ID)
				return nil
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			status, err := followRun(ctx, c, job.ID, cmd.InOrStdin(), out)
			if err != nil {
				return err
			}
			if status != jobs.Done {
				return exitError{code: 1}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.agent, "agent", "", "the agent to run (claude, codex, …)")
	fl.StringVar(&f.folder, "folder", ".", "the folder the agent works in")
	fl.BoolVar(&f.worktree, "worktree", false, "work in a git worktree of the folder's repository, on a new branch")
	fl.BoolVar(&f.workspace, "workspace", false, "work in a fresh folder of the run's own instead of --folder")
	fl.StringVar(&f.task, "task", "", "run an existing task (its id) instead of a new one")
	fl.StringVar(&f.mode, "mode", "ask", "ask, review or unattended")
	fl.StringVar(&f.model, "model", "", "the model (default: the agent's own)")
	fl.StringVar(&f.effort, "effort", "", "the thinking level (default: the model's own)")
	fl.StringVar(&f.git, "git", "local", "git permission: local (no commits), commit (no pushes) or any")
	fl.StringVar(&f.outside, "outside", "read", "outside the folder: none, read or readwrite")
	fl.BoolVar(&f.trusted, "trusted", false, "you trust this folder: the agent may load its own settings and hooks")
	fl.BoolVar(&f.noSandbox, "no-sandbox", false, "turn the agent's own OS sandbox off (the judge still decides every call)")
	fl.BoolVar(&f.noInternet, "no-internet", false, "refuse web tools and network commands")
	fl.BoolVar(&f.askBeforeCommit, "ask-before-commit", false, "ask before each commit, in every mode")
	fl.IntVar(&f.maxMinutes, "max-minutes", 0, "stop after this many minutes of work (time waiting on you not counted; 0: none)")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "stop after this many agent turns (0: none)")
	fl.BoolVar(&f.detach, "detach", false, "assign the run and return without following it")
	fl.BoolVar(&f.newSession, "new-session", false, "always start a new agent session (no continuing a fitting earlier one)")
	fl.StringVar(&f.repo, "repo", "", "clone this repository (an https URL) as the run's folder")
	fl.StringVar(&f.profile, "profile", "", "the run profile (its name or id) giving what the flags leave out (default: the starred one, else the first saved, when --agent is not given)")
	fl.StringVar(&f.cont, "continue", "", "continue an earlier run's agent session (its id): same agent and folder, the conversation resumed")
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}

// pickProfile is the run profile the run takes: the one --profile names, else the default
// (pickRunProfile: starred, else first saved) when neither --agent nor --continue is given; nil
// for none (Quick settings: the flags and their defaults).
func (f runFlags) pickProfile(ctx context.Context, c *client) (*profiles.Profile, error) {
	if f.profile == "" && (f.agent != "" || f.cont != "") {
		return nil, nil
	}
	var list struct{ Profiles []profiles.Profile }
	if err := c.do(ctx, "GET", "/api/agent/profiles", nil, &list); err != nil {
		return nil, err
	}
	if f.profile != "" {
		p, err := profiles.Lookup(list.Profiles, f.profile)
		if err != nil {
			return nil, err
		}
		return &p, nil
	}
	if p, ok := profiles.Pick(list.Profiles); ok {
		return &p, nil
	}
	return nil, nil
}

// request builds the assignment from the flags. Under a run profile (prof non-nil) only the flags
// given count, and the profile fills the rest: its agent, its folder (else this one) and its
// settings.
func (f runFlags) request(args []string, prof *profiles.Profile) (jobs.AssignRequest, error) {
	req := jobs.AssignRequest{Agent: f.agent, TaskID: f.task, Worktree: f.worktree, Continue: f.cont, NewSession: f.newSession}
	if len(args) == 1 {
		req.Title = args[0]
	}
	if f.agent == "" && f.cont == "" && prof == nil {
		return req, errors.New("Name the agent with --agent (claude, …), use a run profile with --profile, or continue an earlier run with --continue.")
	}
	// set says whether a flag's value goes in the request: every flag without a profile (each
	// has its default), only those given under one.
	set := func(flag string) bool { return prof == nil || f.given != nil && f.given(flag) }
	switch {
	case f.workspace && f.worktree:
		return req, errors.New("--workspace and --worktree do not go together: a worktree is of the folder's repository.")
	case f.repo != "" && (f.workspace || f.worktree || f.folderSet):
		return req, errors.New("--repo clones into a folder of the run's own; it does not go with --folder, --worktree or --workspace.")
	case f.repo != "":
		req.RepoURL = f.repo
	case f.workspace:
	case f.cont != "" && !f.folderSet:
		// The earlier run's folder.
	case prof != nil && prof.Folder != "" && !f.folderSet:
		req.Folder = prof.Folder
	default:
		abs, err := filepath.Abs(f.folder)
		if err != nil {
			return req, err
		}
		req.Folder = abs
	}
	s := &req.Settings
	sandbox, internet := !f.noSandbox, !f.noInternet
	// Model, thinking level and the limits have no value of their own to send ("" is the agent's,
	// 0 no limit): without a profile they are sent only when set, under one only when given.
	setOrZero := func(flag string, zero bool) bool { return set(flag) && (prof != nil || !zero) }
	for _, o := range []struct {
		dst  **string
		v    *string
		send bool
	}{{&s.Mode, &f.mode, set("mode")}, {&s.Git, &f.git, set("git")}, {&s.Outside, &f.outside, set("outside")},
		{&s.Model, &f.model, setOrZero("model", f.model == "")}, {&s.Effort, &f.effort, setOrZero("effort", f.effort == "")}} {
		if o.send {
			*o.dst = o.v
		}
	}
	for _, o := range []struct {
		dst  **bool
		v    *bool
		send bool
	}{{&s.Sandbox, &sandbox, set("no-sandbox")}, {&s.Internet, &internet, set("no-internet")},
		{&s.Trusted, &f.trusted, set("trusted")}, {&s.AskBeforeCommit, &f.askBeforeCommit, set("ask-before-commit")}} {
		if o.send {
			*o.dst = o.v
		}
	}
	if setOrZero("max-minutes", f.maxMinutes == 0) {
		s.MaxMinutes = &f.maxMinutes
	}
	if setOrZero("max-turns", f.maxTurns == 0) {
		s.MaxTurns = &f.maxTurns
	}
	if prof != nil {
		req = prof.Fill(req)
		if f.workspace || f.repo != "" {
			req.Folder = "" // a fresh folder of the run's own, not the profile's
		}
	}
	return req, nil
}

// sseEvent is one server-sent event.
type sseEvent struct {
	seq  int64
	kind events.Kind
	data []byte
}

// readSSE reads server-sent events from r until it ends, sending each to fn; fn returns false to stop.
func readSSE(r io.Reader, fn func(sseEvent) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.kind != "" && !fn(ev) {
				return nil
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.seq, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			ev.kind = events.Kind(line[7:])
		case strings.HasPrefix(line, "data: "):
			ev.data = append(ev.data, line[6:]...)
		}
	}
	return sc.Err()
}

// stream opens an event stream of the runtime and sends its events on ch until ctx ends.
func (c *client) stream(ctx context.Context, path string, ch chan<- sseEvent) error {
	req, err := http.NewRequestWithContext(ctx, "GET", c.f.URL+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.f.Token)
	resp, err := (&http.Client{}).Do(req) // no timeout: the stream lasts as long as the run
	if err != nil {
		return fmt.Errorf("Ensemble is not answering at %s: %w", c.f.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return responseError(resp)
	}
	return readSSE(resp.Body, func(ev sseEvent) bool {
		select {
		case ch <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	})
}

// followRun prints the run's events until it ends, asking its Needs me decisions inline, and
// stops the run when ctx ends (Ctrl-C). It returns the status the run ended in.
func followRun(ctx context.Context, c *client, id string, in io.Reader, out io.Writer) (jobs.Status, error) {
	streams, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	runCh, needCh := make(chan sseEvent, 256), make(chan sseEvent, 64)
	var runErr error // set before runCh closes
	go func() {
		runErr = c.stream(streams, "/api/agent/jobs/"+url.PathEscape(id)+"/events", runCh)
		close(runCh)
	}()
	// The terminal is read through a pipe that Ctrl-C closes, so a question waiting for a line
	// gives way to stopping the run.
	pr, pw := io.Pipe()
	go func() { _, err := io.Copy(pw, in); pw.CloseWithError(err) }()
	context.AfterFunc(ctx, func() { pw.CloseWithError(io.EOF) })
	lines := make(chan typedLine) // unbuffered: a line is taken only when a prompt waits for it
	go readLines(streams, bufio.NewReader(pr), lines)
	q := &inlineQuestions{c: c, out: out}
	needsOn := false
	for {
		var typed <-chan typedLine
		if q.asking() {
			typed = lines
		}
		select {
		case <-ctx.Done():
			q.breakLine()
			fmt.Fprintln(out, "\nStopping the run…")
			stopCtx, done := context.WithTimeout(context.Background(), 15*time.Second)
			defer done()
			var j jobs.Job
			if err := c.do(stopCtx, "POST", "/api/agent/jobs/"+url.PathEscape(id)+"/stop", nil, &j); err != nil {
				var ae *apiError
				if errors.As(err, &ae) && ae.Status == http.StatusConflict {
					return jobs.Stopped, nil
				}
				return jobs.Stopped, err
			}
			fmt.Fprintf(out, "Run %s: %s.\n", id, j.Status)
			return j.Status, nil
		case ev, ok := <-runCh:
			if !ok {
				if runErr == nil {
					runErr = errors.New("Ensemble closed it")
				}
				q.breakLine()
				return "", fmt.Errorf("the run's event stream ended before the run did (%v); follow it in the window", runErr)
			}
			if !needsOn {
				// Follow Needs me from the run's first event on, so no decision of this run is missed.
				// If that stream fails, the run is still followed; its questions wait on Needs me.
				needsOn = true
				go c.stream(streams, fmt.Sprintf("/api/events?kinds=needs.&since=%d", ev.seq), needCh)
			}
			var t jobs.Trace
			json.Unmarshal(ev.data, &t)
			if ev.kind == jobs.KindEnded {
				q.breakLine()
			}
			if line := traceLine(ev.kind, t); line != "" {
				q.print(line)
			}
			if ev.kind == jobs.KindEnded {
				return t.Status, nil
			}
		case ev := <-needCh:
			var d needs.Decision
			if json.Unmarshal(ev.data, &d) != nil || d.Source.RunID != id {
				continue
			}
			switch {
			case ev.kind == needs.KindCreated && d.Status == needs.Open:
				q.add(d)
			case d.Status != needs.Open:
				q.settle(d)
			}
		case l := <-typed:
			if err := q.line(ctx, l.text, l.end); err != nil && ctx.Err() == nil {
				return "", err
			}
		}
	}
}

// traceLine is one run event as a line of the terminal; "" for those not shown.
func traceLine(kind events.Kind, t jobs.Trace) string {
	one := func(s string, n int) string {
		s = strings.Join(strings.Fields(s), " ")
		if r := []rune(s); len(r) > n {
			return string(r[:n-1]) + "…"
		}
		return s
	}
	switch kind {
	case jobs.KindStatus:
		if t.Status == jobs.Running && strings.HasPrefix(t.Reason, "Started") {
			return "▶ " + t.Reason
		}
		if t.Status == jobs.Paused || t.Status == jobs.Running {
			return "‖ " + t.Reason
		}
		return ""
	case jobs.KindStarted:
		if t.Model != "" {
			return "  agent up (" + t.Model + ")"
		}
		return "  agent up"
	case jobs.KindMessage:
		return "» " + one(t.Text, 300)
	case jobs.KindThinking:
		return "  (thinking) " + one(t.Text, 120)
	case jobs.KindToolStart:
		return fmt.Sprintf("%3d %s %s", t.Step, t.Tool, one(t.Input, 100))
	case jobs.KindToolEnd:
		mark := "ok"
		if t.Failed {
			mark = "failed"
		}
		return fmt.Sprintf("    └ %s (%s) %s", mark, time.Duration(t.DurationMs)*time.Millisecond, one(t.Output, 80))
	case jobs.KindDecision:
		switch t.Decision {
		case "refuse", "deny":
			return "  ✗ " + t.Tool + ": " + one(t.Reason, 200)
		case "ask":
			return "  ? " + t.Tool + " needs you: " + one(t.Reason, 200)
		case "allow", "allow_run":
			return "  ✓ " + t.Reason
		}
	case jobs.KindQuestion:
		if t.Decision == "recommended" {
			return "  ? " + one(t.Text, 200) + " — " + t.Reason
		}
	case jobs.KindError:
		return "  ! " + one(t.Text, 300)
	case jobs.KindRetry:
		return fmt.Sprintf("  ↻ the agent failed (%s); carrying on in %s", one(t.Text, 120), time.Duration(t.RetryInMs)*time.Millisecond)
	case jobs.KindSessionGone:
		return "  ↻ " + t.Text
	case jobs.KindNote:
		return "  i " + one(t.Text, 300)
	case jobs.KindEnded:
		var b bytes.Buffer
		fmt.Fprintf(&b, "■ %s", t.Status)
		if t.Reason != "" && t.Status != jobs.Done {
			fmt.Fprintf(&b, ": %s", t.Reason)
		}
		if u := t.Usage; u != nil {
			fmt.Fprintf(&b, " — %d turns, %d tokens in, %d out", t.Turns, u.InputTokens, u.OutputTokens)
			if u.CostUSD > 0 {
				fmt.Fprintf(&b, ", $%.2f", u.CostUSD)
			}
		}
		for _, c := range t.Changes {
			switch {
			case c.Added < 0:
				fmt.Fprintf(&b, "\n  ± %s (binary)", c.Path)
			default:
				fmt.Fprintf(&b, "\n  ± %s +%d −%d", c.Path, c.Added, c.Removed)
			}
		}
		if t.Summary != "" {
			fmt.Fprintf(&b, "\n\n%s", t.Summary)
		}
		return b.String()
	}
	return ""
}
