package codex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
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
	cmd    *exec.Cmd
	conn   *conn
	sess   *session
	log    *slog.Logger
	stdin  *os.File
	stderr *tail

	kill context.CancelFunc // ends the group: exec.Cmd.Cancel, then WaitDelay

	// graces are the stop steps' waits, fixed when the run starts.
	interruptGrace, closeGrace, termGrace, drainGrace time.Duration

	inputOnce sync.Once
	stopMu    sync.Mutex // one stop sequence at a time
	stopped   atomic.Bool

	exited chan struct{} // the process has been waited for
	done   chan struct{} // everything is cleaned up; res and err are set
	res    engines.Result
	err    error
}

func start(ctx context.Context, d *Driver, bin, home string, spec engines.Spec, host engines.Host) (*run, error) {
	path := strings.Join(agentproc.TrustedPath(home, spec.Folder), string(os.PathListSeparator))

	killCtx, kill := context.WithCancel(context.Background())
	cmd := exec.CommandContext(killCtx, bin, "app-server")
	cmd.Dir = spec.Folder
	cmd.Env = agentEnv(d.environ(), spec.Home, path, spec.Env)
	agentproc.OwnGroup(cmd)
	cmd.Cancel = func() error { return agentproc.SignalGroup(cmd, false) }
	cmd.WaitDelay = termGrace

	// Our own pipes rather than StdoutPipe: Wait must not wait on a
	// grandchild that keeps the output open, and reading must not race Wait.
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		kill()
		return nil, fmt.Errorf("codex: start: %w", err)
	}
	outR, outW, err := pipe()
	if err != nil {
		kill()
		closeAll()
		return nil, fmt.Errorf("codex: start: %w", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		kill()
		closeAll()
		return nil, fmt.Errorf("codex: start: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		kill()
		closeAll()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", engines.ErrNotInstalled, installHint)
		}
		return nil, fmt.Errorf("codex: start %s: %w", bin, err)
	}
	inR.Close()
	outW.Close()
	errW.Close()

	r := &run{
		cmd:    cmd,
		log:    d.log,
		stdin:  inW,
		stderr: newTail(16 << 10),
		kill:   kill,

		interruptGrace: interruptGrace,
		closeGrace:     closeGrace,
		termGrace:      termGrace,
		drainGrace:     drainGrace,

		exited: make(chan struct{}),
		done:   make(chan struct{}),
	}
	r.sess = newSession(host, spec.Folder, d.log)
	r.sess.ended = r.closeInput // one brief, one turn: codex exits when stdin ends
	r.conn = newConn(inW, r.sess)
	r.sess.steer = r.steer
	d.log.Debug("codex started", "pid", cmd.Process.Pid, "bin", bin, "folder", spec.Folder, "resume", spec.Resume)

	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		_ = r.conn.serve(context.Background(), outR)
	}()
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		_, _ = io.Copy(io.MultiWriter(r.stderr, logWriter{d.log}), errR)
	}()
	go r.begin(spec)
	go r.wait(outR, errR, outDone, errDone)
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), r.interruptGrace+r.closeGrace+2*r.termGrace)
			defer cancel()
			_ = r.Stop(sctx)
		case <-r.done:
		}
	}()
	return r, nil
}

// thread is the part of thread/start's and thread/resume's answer the driver
// reads.
type thread struct {
	Thread struct {
		ID string `json:"id"`
	} `json:"thread"`
	Model string `json:"model"`
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
		case <-r.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	quit := func(err error) {
		if r.stopped.Load() || isExited(r.exited) || errors.Is(err, errClosed) {
			r.closeInput()
			return
		}
		r.sess.fail(err)
		r.closeInput()
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
		r.closeInput()
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
			r.closeInput()
			return
		}
		quit(fmt.Errorf("codex: Codex did not open the thread: %w", err))
		return
	}
	if th.Thread.ID == "" {
		quit(errors.New("codex: Codex opened a thread without an id"))
		return
	}
	r.sess.started(th.Thread.ID, th.Model)
	if r.stopped.Load() {
		r.closeInput()
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

func isExited(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// wait reaps the process, ends what is left of its group, drains its output
// and records how the run ended.
func (r *run) wait(outR, errR *os.File, outDone, errDone chan struct{}) {
	werr := r.cmd.Wait()
	close(r.exited)
	// Whatever the agent left running in its group goes with it.
	_ = agentproc.SignalGroup(r.cmd, true)
	r.kill()
	for _, p := range []struct {
		f    *os.File
		done chan struct{}
	}{{outR, outDone}, {errR, errDone}} {
		select {
		case <-p.done:
		case <-time.After(r.drainGrace):
			// Something outside the group holds the pipe open.
			p.f.Close()
			<-p.done
		}
		p.f.Close()
	}
	r.closeInput()
	<-r.conn.done

	res, err := r.sess.outcome(r.stopped.Load())
	if err != nil && !errors.Is(err, engines.ErrStopped) && !errors.Is(err, engines.ErrSignedOut) && res.Summary == "" {
		last := lastLine(r.stderr.String())
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
	close(r.done)
}

func (r *run) closeInput() {
	r.inputOnce.Do(func() { r.stdin.Close() })
}

// Wait blocks until the run ends.
func (r *run) Wait() (engines.Result, error) {
	<-r.done
	return r.res, r.err
}

// Stop interrupts the turn (turn/interrupt), gives it a moment, closes its
// input, then sends SIGTERM and finally SIGKILL to the whole process group. It
// returns once the process is gone, or ctx's error when ctx ends first (the
// group is killed then).
func (r *run) Stop(ctx context.Context) error {
	r.stopped.Store(true)
	r.sess.stopping.Store(true)
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	if isExited(r.exited) {
		<-r.done
		return nil
	}
	pause := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-r.exited:
			return true
		case <-t.C:
		case <-ctx.Done():
		}
		return false
	}
	if threadID, turnID := r.sess.active(); turnID != "" {
		ictx, cancel := context.WithTimeout(ctx, r.interruptGrace)
		_, err := r.conn.call(ictx, "turn/interrupt", map[string]any{"threadId": threadID, "turnId": turnID})
		cancel()
		if err == nil && pause(r.closeGrace) { // turn/completed closes stdin; codex exits
			<-r.done
			return nil
		}
	}
	r.closeInput()
	if pause(r.closeGrace) {
		<-r.done
		return nil
	}
	r.kill() // exec.Cmd.Cancel: SIGTERM to the group; after WaitDelay, SIGKILL
	if pause(r.termGrace) {
		<-r.done
		return nil
	}
	_ = agentproc.SignalGroup(r.cmd, true)
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("codex: stop: %w", context.Cause(ctx))
	}
}

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// logWriter logs the CLI's standard error at debug level.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Debug("codex stderr", "text", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
