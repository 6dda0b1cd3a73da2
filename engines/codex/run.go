package codex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
	"github.com/ensemblework/ensemble/engines/sandbox"
)

// How long each step of stopping waits before the next, harder one.
var (
	interruptGrace = 3 * time.Second // turn/interrupt answered, turn wound down
	closeGrace     = 2 * time.Second // stdin closed: codex exits on its own
	termGrace      = 3 * time.Second // SIGTERM to the group, then SIGKILL
	drainGrace     = 5 * time.Second // output still open after the group is gone
	startTimeout   = 2 * time.Minute // initialize to turn/start answered (MCP servers start first)
)

// version is what the driver calls itself in initialize's clientInfo.
const version = "0.1.0"

// run is one running codex app-server.
type run struct {
	proc *agentproc.Process
	conn *conn
	sess *session
	log  *slog.Logger

	stopped atomic.Bool

	res engines.Result
	err error
}

func start(ctx context.Context, d *Driver, bin, home string, spec engines.Spec, host engines.Host, enf engines.Enforcement) (*run, error) {
	path := strings.Join(agentproc.TrustedPath(home, spec.Folder), string(os.PathListSeparator))
	env := agentEnv(d.environ(), spec.Home, path, spec.AgentEnv())
	prog, args := bin, []string{"app-server"}
	if enf.Whole {
		var err error
		if prog, args, err = d.sys.Wrap(ctx, wholeSandbox(spec.Sandbox, env), wholeAgent(spec, home, env, bin, args, d.log)); err != nil {
			return nil, err
		}
		// Seatbelt cannot nest: on macOS Ensemble's is the only one.
		spec.Sandbox.On = d.sys.GOOS == "linux"
	}
	proc, err := agentproc.Start(agentproc.Command{
		Name:        "codex",
		Path:        prog,
		Args:        args,
		Dir:         spec.Folder,
		Env:         env,
		InstallHint: installHint,
		Graces:      agentproc.Graces{Interrupt: interruptGrace, Close: closeGrace, Term: termGrace, Drain: drainGrace},
		Log:         d.log,
		Record:      d.record,
	})
	if err != nil {
		return nil, err
	}

	r := &run{proc: proc, log: d.log}
	r.sess = newSession(sandbox.Receipt(host, enf), spec.Folder, d.log)
	r.sess.sandboxed = spec.Sandbox.On
	r.sess.ended = proc.CloseInput // one brief, one turn: codex exits when stdin ends
	r.conn = newConn(proc.Input(), r.sess)
	r.sess.steer = r.steer
	d.log.Debug("codex started", "pid", proc.Pid(), "bin", bin, "folder", spec.Folder, "resume", spec.Resume)

	proc.Serve(ctx, agentproc.Handlers{
		Out:   func(out io.Reader) { _ = r.conn.serve(context.Background(), out) },
		Ended: r.ended,
		Stop:  r.Stop,
	})
	go r.begin(spec)
	return r, nil
}

// wholeSandbox is the run's sandbox for Codex held whole by Ensemble's: its config file, which
// can start programs, is not Codex's commands' to change wherever CODEX_HOME is.
func wholeSandbox(sb engines.Sandbox, env []string) engines.Sandbox {
	sb.DenyWrite = append(slices.Clone(sb.DenyWrite), filepath.Join(codexHomeOf(env), "config.toml"))
	return sb
}

// wholeAgent is Codex as Ensemble's sandbox holds it: CODEX_HOME (its threads, logs and helpers)
// writable, its own sign-in there readable.
func wholeAgent(spec engines.Spec, home string, env []string, bin string, args []string, log *slog.Logger) sandbox.Agent {
	codexHome := codexHomeOf(env)
	if spec.Home != "" {
		home = spec.Home
	}
	return sandbox.Agent{Name: "codex", Bin: bin, Args: args, Env: env, Folder: spec.Folder, Home: home,
		State: []string{codexHome}, Own: []string{filepath.Join(codexHome, "auth.json")}, Log: log}
}

// thread is the part of thread/start's and thread/resume's answer the driver
// reads.
type thread struct {
	Thread struct {
		ID string `json:"id"`
	} `json:"thread"`
	Model string `json:"model"`
	// ReasoningEffort is the thread's own thinking level (null: the model's default).
	ReasoningEffort *string `json:"reasoningEffort"`
}

// effort is the thinking level the thread reports, for a turn that sets none: Codex does not echo
// a turn's own level, so the thread's would be the wrong one to report then.
func (th thread) effort(spec engines.Spec) string {
	if spec.Effort != "" || th.ReasoningEffort == nil {
		return ""
	}
	return *th.ReasoningEffort
}

// account is account/read's answer.
type account struct {
	Account *struct {
		Type string `json:"type"`
	} `json:"account"`
	RequiresOpenaiAuth bool `json:"requiresOpenaiAuth"`
}

// begin runs the protocol up to the turn: initialize, account/read, the
// thread, the brief. Whatever stops it ends the run (stdin closed) with the
// reason recorded.
func (r *run) begin(spec engines.Spec) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	go func() { // the process ending ends the wait
		select {
		case <-r.proc.Exited():
			cancel()
		case <-ctx.Done():
		}
	}()
	quit := func(err error) {
		if r.stopped.Load() || r.proc.HasExited() || errors.Is(err, errClosed) {
			r.proc.CloseInput()
			return
		}
		r.sess.fail(err)
		r.proc.CloseInput()
	}
	_, err := r.conn.call(ctx, "initialize", map[string]any{
		"clientInfo": map[string]any{"name": "ensemble", "title": "Ensemble", "version": version},
	})
	if err != nil {
		quit(fmt.Errorf("codex: Codex did not accept the start of the protocol: %w", err))
		return
	}
	if err := r.conn.notify("initialized", nil); err != nil {
		quit(fmt.Errorf("codex: %w", err))
		return
	}
	acct, err := call[account](ctx, r.conn, "account/read", map[string]any{})
	if err != nil {
		quit(fmt.Errorf("codex: Codex could not say how it is signed in: %w", err))
		return
	}
	if acct.Account == nil && acct.RequiresOpenaiAuth {
		// A provider of the person's own in config.toml needs no OpenAI
		// sign-in (requiresOpenaiAuth false): that counts as signed in.
		quit(fmt.Errorf("%w: Codex is not signed in. %s", engines.ErrSignedOut, signInHint))
		return
	}
	if r.stopped.Load() {
		r.proc.CloseInput()
		return
	}
	method := "thread/start"
	if spec.Resume != "" {
		method = "thread/resume"
	}
	th, err := call[thread](ctx, r.conn, method, threadParams(spec))
	if err != nil {
		if spec.Resume != "" && strings.Contains(strings.ToLower(err.Error()), noRollout) {
			r.sess.markGone()
			r.proc.CloseInput()
			return
		}
		quit(fmt.Errorf("codex: Codex did not open the thread: %w", err))
		return
	}
	if th.Thread.ID == "" {
		quit(errors.New("codex: Codex opened a thread without an id"))
		return
	}
	r.sess.started(th.Thread.ID, th.Model, th.effort(spec))
	if r.stopped.Load() {
		r.proc.CloseInput()
		return
	}
	turn, err := call[struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}](ctx, r.conn, "turn/start", turnParams(th.Thread.ID, spec))
	if err != nil {
		quit(fmt.Errorf("codex: Codex did not take the brief: %w", err))
		return
	}
	r.sess.setTurn(turn.Turn.ID)
}

// steer adds text to the running turn, as the person's words.
func (r *run) steer(ctx context.Context, text string) error {
	threadID, turnID := r.sess.active()
	if turnID == "" {
		return errors.New("no turn is running")
	}
	_, err := r.conn.call(ctx, "turn/steer", map[string]any{
		"threadId": threadID, "expectedTurnId": turnID,
		"input": []any{map[string]any{"type": "text", "text": text, "text_elements": []any{}}},
	})
	return err
}

// ended records how the run ended, once the process is gone and its output
// read (see [agentproc.Process.Serve]).
func (r *run) ended(werr error) {
	<-r.conn.done

	res, err := r.sess.outcome(r.stopped.Load())
	if err != nil && !errors.Is(err, engines.ErrStopped) && !errors.Is(err, engines.ErrSignedOut) && res.Summary == "" {
		last := agentproc.LastLine(r.proc.Stderr())
		switch {
		case werr != nil && last != "":
			err = fmt.Errorf("%w (codex exited: %v: %s)", err, werr, last)
		case werr != nil:
			err = fmt.Errorf("%w (codex exited: %v)", err, werr)
		case last != "":
			err = fmt.Errorf("%w (codex said: %s)", err, last)
		}
	}
	r.res, r.err = res, err
	r.log.Debug("codex ended", "thread", res.SessionID, "gone", res.Gone, "exit", werr, "err", err)
}

// Wait blocks until the run ends.
func (r *run) Wait() (engines.Result, error) {
	<-r.proc.Done()
	return r.res, r.err
}

// Stop interrupts the turn (turn/interrupt) when one is running, gives it a
// moment, closes its input, then sends SIGTERM and finally SIGKILL to the
// whole process group (see [agentproc.Process.Stop]). It returns once the
// process is gone, or ctx's error when ctx ends first (the group is killed
// then).
func (r *run) Stop(ctx context.Context) error {
	r.stopped.Store(true)
	r.sess.stopping.Store(true)
	return r.proc.Stop(ctx, func(ictx context.Context) bool {
		threadID, turnID := r.sess.active()
		if turnID == "" {
			return false
		}
		_, err := r.conn.call(ictx, "turn/interrupt", map[string]any{"threadId": threadID, "turnId": turnID})
		return err == nil // turn/completed closes stdin; codex exits
	})
}
