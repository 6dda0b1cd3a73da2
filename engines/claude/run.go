package claude

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
	"github.com/ensemblework/ensemble/engines/sandbox"
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
	proc *agentproc.Process
	conn *conn
	sess *session
	log  *slog.Logger
	tmp  string

	stopped atomic.Bool

	res engines.Result
	err error
}

func start(ctx context.Context, d *Driver, bin, home string, spec engines.Spec, host engines.Host, enf engines.Enforcement) (_ *run, err error) {
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
	proc, err := agentproc.Start(agentproc.Command{
		Name:        "claude",
		Path:        bin,
		Args:        args(spec, settings, mcp),
		Dir:         spec.Folder,
		Env:         agentEnv(d.environ(), spec.Home, path, spec.AgentEnv()),
		InstallHint: installHint,
		Graces:      agentproc.Graces{Interrupt: interruptGrace, Close: closeGrace, Term: termGrace, Drain: drainGrace},
		Log:         d.log,
		Record:      d.record,
	})
	if err != nil {
		return nil, err
	}

	r := &run{proc: proc, log: d.log, tmp: tmp}
	r.sess = newSession(sandbox.Receipt(host, enf), spec.Folder, d.log)
	r.sess.judgeAll = d.judgeAll
	r.sess.droppedKey = droppedKey(d.environ())
	r.sess.ended = proc.CloseInput // one brief, one turn: claude exits when stdin ends
	r.conn = newConn(proc.Input(), r.sess)
	d.log.Debug("claude started", "pid", proc.Pid(), "bin", bin, "folder", spec.Folder, "resume", spec.Resume)

	proc.Serve(ctx, agentproc.Handlers{
		Out:   func(out io.Reader) { _ = r.conn.serve(context.Background(), out) },
		Ended: r.ended,
		Stop:  r.Stop,
	})
	go r.begin(spec.Prompt)
	return r, nil
}

// begin initializes the protocol, then sends the brief.
func (r *run) begin(prompt string) {
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	go func() { // the process ending ends the wait
		select {
		case <-r.proc.Exited():
			cancel()
		case <-ctx.Done():
		}
	}()
	if _, err := r.conn.request(ctx, r.sess.initialize()); err != nil {
		if errors.Is(err, errClosed) || r.stopped.Load() || r.proc.HasExited() {
			return
		}
		r.sess.protocolError(fmt.Sprintf("Claude Code did not accept the start of the protocol: %v", err))
		r.proc.CloseInput()
		return
	}
	if r.stopped.Load() {
		return
	}
	if err := r.conn.send(userMessage(prompt)); err != nil && !r.proc.HasExited() {
		r.sess.protocolError(fmt.Sprintf("The brief could not be sent to Claude Code: %v", err))
	}
}

// ended records how the run ended, once the process is gone and its output
// read (see [agentproc.Process.Serve]).
func (r *run) ended(werr error) {
	<-r.conn.done
	os.RemoveAll(r.tmp)

	stderr := r.proc.Stderr()
	if strings.Contains(stderr, noConversation) {
		r.sess.markGone()
	}
	res, err := r.sess.outcome(r.stopped.Load())
	if err != nil && !errors.Is(err, engines.ErrStopped) && res.Summary == "" && werr != nil {
		if last := agentproc.LastLine(stderr); last != "" {
			err = fmt.Errorf("%w (claude exited: %v: %s)", err, werr, last)
		} else {
			err = fmt.Errorf("%w (claude exited: %v)", err, werr)
		}
	}
	r.res, r.err = res, err
	r.log.Debug("claude ended", "session", res.SessionID, "gone", res.Gone, "exit", werr, "err", err)
}

// Wait blocks until the run ends.
func (r *run) Wait() (engines.Result, error) {
	<-r.proc.Done()
	return r.res, r.err
}

// Stop interrupts the turn (Claude Code's interrupt control request), gives
// it a moment, closes its input, then sends SIGTERM and finally SIGKILL to
// the whole process group (see [agentproc.Process.Stop]). It returns once the
// process is gone, or ctx's error when ctx ends first (the group is killed
// then).
func (r *run) Stop(ctx context.Context) error {
	r.stopped.Store(true)
	r.sess.stopping.Store(true)
	return r.proc.Stop(ctx, func(ictx context.Context) bool {
		_, err := r.conn.request(ictx, map[string]any{"subtype": "interrupt"})
		return err == nil // then a moment to print its result
	})
}
