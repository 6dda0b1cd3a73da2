package agentproc

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
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// Graces are how long each step of stopping an agent waits before the next,
// harder one (see [Process.Stop]).
type Graces struct {
	Interrupt time.Duration // the interrupt answered, the turn wound down
	Close     time.Duration // input closed: the agent exits on its own
	Term      time.Duration // SIGTERM to the group, then SIGKILL
	Drain     time.Duration // output still open after the group is gone
}

// Command is an agent CLI to start with [Start].
type Command struct {
	Name        string   // the driver's name ("claude"), which starts its errors and log lines
	Path        string   // the program
	Args        []string // its arguments
	Dir         string   // the work folder
	Env         []string // its whole environment (see [Env])
	InstallHint string   // how to install it, for the error when it is missing
	Graces      Graces   // the stop steps' waits, fixed for the life of the process
	Log         *slog.Logger
	// Record, when set, gets a copy of everything the agent prints on its standard output: the
	// transcript golden tests replay.
	Record io.Writer
}

// stderrTail is how much of the agent's standard error a Process keeps for
// the sentence that explains a failed run.
const stderrTail = 16 << 10

// Process is one agent CLI running with pipes (never a PTY) in a process group
// of its own. Its standard output goes to the reader given to [Process.Serve];
// the end of its standard error is kept (see [Process.Stderr]) and logged at
// debug level. Both drivers of a stdio protocol (claude, codex) run their agent
// this way, so starting, reaping and the stop escalation live here once.
type Process struct {
	// Cmd is the started command. Its Wait belongs to the Process.
	Cmd *exec.Cmd

	name   string
	log    *slog.Logger
	graces Graces
	stdin  *os.File
	stdout *os.File
	stderr *os.File
	tail   *tail
	record io.Writer

	kill context.CancelFunc // ends the group: exec.Cmd.Cancel, then WaitDelay

	inputOnce sync.Once
	stopMu    sync.Mutex // one stop sequence at a time

	exited chan struct{} // the process has been waited for
	done   chan struct{} // Serve's ended has returned
}

// Start starts c in a process group of its own (that dies with this process
// where the system allows), with pipes for its input and output. Cancelling
// the process (see [Process.Stop]) sends SIGTERM to its group, then SIGKILL
// after c.Graces.Term. A program that cannot be found gives an error wrapping
// [engines.ErrNotInstalled] that says c.InstallHint.
func Start(c Command) (*Process, error) {
	killCtx, kill := context.WithCancel(context.Background())
	cmd := exec.CommandContext(killCtx, c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	OwnGroup(cmd)
	cmd.Cancel = func() error { return SignalGroup(cmd, false) }
	cmd.WaitDelay = c.Graces.Term

	// Our own pipes rather than StdoutPipe: Wait must not wait on a
	// grandchild that keeps the output open, and reading must not race Wait.
	var files []*os.File
	fail := func(err error) (*Process, error) {
		kill()
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	var ends [3][2]*os.File // stdin, stdout, stderr: the read end, then the write end
	for i := range ends {
		r, w, err := os.Pipe()
		if err != nil {
			return fail(fmt.Errorf("%s: start: %w", c.Name, err))
		}
		files = append(files, r, w)
		ends[i] = [2]*os.File{r, w}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0][0], ends[1][1], ends[2][1]
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return fail(fmt.Errorf("%w: %s", engines.ErrNotInstalled, c.InstallHint))
		}
		return fail(fmt.Errorf("%s: start %s: %w", c.Name, c.Path, err))
	}
	// The child's ends are the child's now.
	ends[0][0].Close()
	ends[1][1].Close()
	ends[2][1].Close()
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Process{
		Cmd:    cmd,
		name:   c.Name,
		log:    log,
		graces: c.Graces,
		stdin:  ends[0][1],
		stdout: ends[1][0],
		stderr: ends[2][0],
		tail:   &tail{max: stderrTail},
		record: c.Record,
		kill:   kill,
		exited: make(chan struct{}),
		done:   make(chan struct{}),
	}, nil
}

// Input is the agent's standard input. Close it with [Process.CloseInput].
func (p *Process) Input() io.Writer { return p.stdin }

// Pid is the agent's process id (its group's id too, where there are groups).
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Handlers are what a driver does with its agent's process (see
// [Process.Serve]).
type Handlers struct {
	// Out reads the agent's standard output until it ends.
	Out func(stdout io.Reader)
	// Ended records how the run ended, once the process is gone and its
	// output read; waitErr is exec.Cmd.Wait's error.
	Ended func(waitErr error)
	// Stop stops the run when Serve's ctx ends first; its ctx allows every
	// step of [Process.Stop].
	Stop func(ctx context.Context) error
}

// Serve runs the process's life on goroutines of its own: h.Out reads its
// output; then, once it has exited, whatever it left running in its group is
// killed, its output is drained (for at most the Drain grace, then the pipes
// are closed: something outside the group holds them open), its input is
// closed, h.Ended is called and [Process.Done] closes. If ctx ends before
// then, h.Stop is called. Call Serve once, right after [Start].
func (p *Process) Serve(ctx context.Context, h Handlers) {
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		var out io.Reader = p.stdout
		if p.record != nil {
			out = io.TeeReader(out, p.record)
		}
		h.Out(out)
	}()
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		_, _ = io.Copy(io.MultiWriter(p.tail, logWriter{p.log, p.name + " stderr"}), p.stderr)
	}()
	go p.wait(outDone, errDone, h.Ended)
	go func() {
		select {
		case <-ctx.Done():
			g := p.graces
			sctx, cancel := context.WithTimeout(context.Background(), g.Interrupt+g.Close+2*g.Term)
			defer cancel()
			_ = h.Stop(sctx)
		case <-p.done:
		}
	}()
}

// wait reaps the process, ends what is left of its group, drains its output
// and has the driver record how the run ended.
func (p *Process) wait(outDone, errDone chan struct{}, ended func(error)) {
	werr := p.Cmd.Wait()
	close(p.exited)
	// Whatever the agent left running in its group goes with it.
	_ = SignalGroup(p.Cmd, true)
	p.kill()
	for _, o := range []struct {
		f    *os.File
		done chan struct{}
	}{{p.stdout, outDone}, {p.stderr, errDone}} {
		select {
		case <-o.done:
		case <-time.After(p.graces.Drain):
			// Something outside the group holds the pipe open.
			o.f.Close()
			<-o.done
		}
		o.f.Close()
	}
	p.CloseInput()
	ended(werr)
	close(p.done)
}

// CloseInput closes the agent's standard input (once; later calls do
// nothing). Both protocols read a closed input as the end of the session.
func (p *Process) CloseInput() {
	p.inputOnce.Do(func() { p.stdin.Close() })
}

// Exited is closed once the process has been waited for.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// HasExited reports whether the process has been waited for.
func (p *Process) HasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Done is closed once Serve's Ended has returned: the run is over.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stderr is the end of what the agent wrote to its standard error.
func (p *Process) Stderr() string { return p.tail.String() }

// Stop ends the process step by step, each step given its grace before the
// next, harder one: interrupt (the driver's protocol message, given a context
// bounded by the Interrupt grace; it reports whether the agent took it, and
// only then is the agent given the Close grace to wind down on its own), then
// the input closed, then SIGTERM to the whole group, then SIGKILL. It returns
// once the run is over (see [Process.Done]), or ctx's error when ctx ends
// first (the group is killed then). One stop sequence runs at a time; a
// process already gone only waits for the run to be over.
func (p *Process) Stop(ctx context.Context, interrupt func(ctx context.Context) bool) error {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.HasExited() {
		<-p.done
		return nil
	}
	pause := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-p.exited:
			return true
		case <-t.C:
		case <-ctx.Done():
		}
		return false
	}
	ictx, cancel := context.WithTimeout(ctx, p.graces.Interrupt)
	took := interrupt(ictx)
	cancel()
	if took && pause(p.graces.Close) { // a moment to finish the turn and exit
		<-p.done
		return nil
	}
	p.CloseInput()
	if pause(p.graces.Close) {
		<-p.done
		return nil
	}
	p.kill() // exec.Cmd.Cancel: SIGTERM to the group; after WaitDelay, SIGKILL
	if pause(p.graces.Term) {
		<-p.done
		return nil
	}
	_ = SignalGroup(p.Cmd, true)
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: stop: %w", p.name, context.Cause(ctx))
	}
}

// LastLine is the last line of s, trimmed: what an agent that failed said
// last on its standard error.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

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

// logWriter logs what is written to it at debug level.
type logWriter struct {
	log *slog.Logger
	msg string
}

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Debug(w.msg, "text", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
