package claude

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
	interruptGrace = 3 * time.Second // interrupt answered, turn wound down
	closeGrace     = 2 * time.Second // stdin closed: claude exits on its own
	termGrace      = 3 * time.Second // SIGTERM to the group, then SIGKILL
	drainGrace     = 5 * time.Second // output still open after the group is gone
	initTimeout    = 2 * time.Minute // initialize answered (MCP servers start first)
)

// run is one running claude.
type run struct {
	cmd    *exec.Cmd
	conn   *conn
	sess   *session
	log    *slog.Logger
	tmp    string
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

func start(ctx context.Context, d *Driver, bin, home string, spec engines.Spec, host engines.Host) (_ *run, err error) {
	tmp, err := os.MkdirTemp("", "ensemble-claude-")
	if err != nil {
		return nil, fmt.Errorf("claude: start: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	settings, mcp, err := runFiles(tmp, spec)
	if err != nil {
		return nil, err
	}
	path := strings.Join(agentproc.TrustedPath(home, spec.Folder), string(os.PathListSeparator))

	killCtx, kill := context.WithCancel(context.Background())
	cmd := exec.CommandContext(killCtx, bin, args(spec, settings, mcp)...)
	cmd.Dir = spec.Folder
	cmd.Env = agentEnv(d.environ(), spec.Home, path, spec.Env)
	agentproc.OwnGroup(cmd)
	cmd.Cancel = func() error { return agentproc.SignalGroup(cmd, false) }
	cmd.WaitDelay = termGrace

	// Our own pipes rather than StdoutPipe: Wait must not wait on a
	// grandchild that keeps the output open, and reading must not race Wait.
	inR, inW, err := os.Pipe()
	if err != nil {
		kill()
		return nil, fmt.Errorf("claude: start: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		kill()
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("claude: start: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		kill()
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, fmt.Errorf("claude: start: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		kill()
		for _, f := range []*os.File{inR, inW, outR, outW, errR, errW} {
			f.Close()
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", engines.ErrNotInstalled, installHint)
		}
		return nil, fmt.Errorf("claude: start %s: %w", bin, err)
	}
	inR.Close()
	outW.Close()
	errW.Close()

	r := &run{
		cmd:    cmd,
		log:    d.log,
		tmp:    tmp,
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
	r.sess.judgeAll = d.judgeAll
	r.sess.ended = r.closeInput // one brief, one turn: claude exits when stdin ends
	r.conn = newConn(inW, r.sess)
	d.log.Debug("claude started", "pid", cmd.Process.Pid, "bin", bin, "folder", spec.Folder, "resume", spec.Resume)

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
	go r.begin(spec.Prompt)
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

// begin initializes the protocol, then sends the brief.
func (r *run) begin(prompt string) {
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	go func() { // the process ending ends the wait
		select {
		case <-r.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	if _, err := r.conn.request(ctx, r.sess.initialize()); err != nil {
		if errors.Is(err, errClosed) || r.stopped.Load() || isExited(r.exited) {
			return
		}
		r.sess.protocolError(fmt.Sprintf("Claude Code did not accept the start of the protocol: %v", err))
		r.closeInput()
		return
	}
	if r.stopped.Load() {
		return
	}
	if err := r.conn.send(userMessage(prompt)); err != nil && !isExited(r.exited) {
		r.sess.protocolError(fmt.Sprintf("The brief could not be sent to Claude Code: %v", err))
	}
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
	os.RemoveAll(r.tmp)

	stderr := r.stderr.String()
	if strings.Contains(stderr, noConversation) {
		r.sess.markGone()
	}
	res, err := r.sess.outcome(r.stopped.Load())
	if err != nil && !errors.Is(err, engines.ErrStopped) && res.Summary == "" && werr != nil {
		if last := lastLine(stderr); last != "" {
			err = fmt.Errorf("%w (claude exited: %v: %s)", err, werr, last)
		} else {
			err = fmt.Errorf("%w (claude exited: %v)", err, werr)
		}
	}
	r.res, r.err = res, err
	r.log.Debug("claude ended", "session", res.SessionID, "gone", res.Gone, "exit", werr, "err", err)
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

// Stop interrupts the turn (Claude Code's interrupt control request), gives
// it a moment, closes its input, then sends SIGTERM and finally SIGKILL to
// the whole process group. It returns once the process is gone, or ctx's
// error when ctx ends first (the group is killed then).
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
	ictx, cancel := context.WithTimeout(ctx, r.interruptGrace)
	_, err := r.conn.request(ictx, map[string]any{"subtype": "interrupt"})
	cancel()
	if err == nil && pause(r.closeGrace) { // a moment to print its result
		<-r.done
		return nil
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
		return fmt.Errorf("claude: stop: %w", context.Cause(ctx))
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
	w.log.Debug("claude stderr", "text", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
