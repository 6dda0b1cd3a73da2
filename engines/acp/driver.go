package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
	"github.com/ensemblework/ensemble/engines/sandbox"
)

// How long each step of ending the process waits before the next, harder one.
var (
	closeGrace = 2 * time.Second // stdin closed: the agent exits on its own
	termGrace  = 3 * time.Second // SIGTERM to the group, then SIGKILL
	drainGrace = 3 * time.Second // output still open after the group is gone
)

// Driver starts runs of one ACP agent. Make one with [New], or all with [Drivers].
type Driver struct {
	p       Profile
	bin     string
	log     *slog.Logger
	environ func() []string
	sys     sandbox.System
}

var _ engines.Driver = (*Driver)(nil)

// Option configures a [Driver].
type Option func(*Driver)

// WithBinary runs the program at path instead of looking it up on the trusted path.
func WithBinary(path string) Option { return func(d *Driver) { d.bin = path } }

// WithLogger logs protocol trouble and the agent's standard error to log.
func WithLogger(log *slog.Logger) Option { return func(d *Driver) { d.log = log } }

// WithSystem checks the sandbox's needs against sys instead of this computer (tests).
func WithSystem(sys sandbox.System) Option { return func(d *Driver) { d.sys = sys } }

// New returns a driver for the agent p.
func New(p Profile, opts ...Option) *Driver {
	d := &Driver{p: p, log: slog.New(slog.DiscardHandler), environ: os.Environ, sys: sandbox.Local()}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Drivers returns a driver for each of [Profiles].
func Drivers(opts ...Option) []engines.Driver {
	var out []engines.Driver
	for _, p := range Profiles() {
		out = append(out, New(p, opts...))
	}
	return out
}

// Profile returns the profile whose Name is name.
func ProfileNamed(name string) (Profile, bool) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// Name is the profile's name.
func (d *Driver) Name() string { return d.p.Name }

// Start starts the agent on spec; it returns once the process is running.
func (d *Driver) Start(ctx context.Context, spec engines.Spec, host engines.Host) (engines.Run, error) {
	p := d.p
	if host == nil {
		return nil, fmt.Errorf("%s: start: no host", p.Name)
	}
	if spec.Folder == "" || !filepath.IsAbs(spec.Folder) {
		return nil, fmt.Errorf("%s: start: the work folder must be an absolute path (got %q)", p.Name, spec.Folder)
	}
	if fi, err := os.Stat(spec.Folder); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: start: the work folder %s does not exist", p.Name, spec.Folder)
	}
	conf, err := d.confinement(ctx, spec)
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	bin := d.bin
	if bin == "" {
		var err error
		if bin, err = find(p, home, spec.Folder); err != nil {
			return nil, err
		}
	}
	return d.start(ctx, bin, home, spec, sandbox.Receipt(host, conf.receipt), conf)
}

// confinement is how a run's commands are confined: by nothing (the sandbox off), by the agent's
// own sandbox, or by Ensemble's around the whole agent, for an agent with none of its own here.
type confinement struct {
	own, ours bool
	receipt   engines.Enforcement
}

// confinement checks that the sandbox the run needs can run here; its error is the sentence the
// run stops with.
func (d *Driver) confinement(ctx context.Context, spec engines.Spec) (confinement, error) {
	p := d.p
	switch {
	case !spec.Sandbox.On:
		return confinement{receipt: sandbox.Off}, nil
	case p.Sandbox != nil && p.Sandbox(d.sys.GOOS):
		return confinement{own: true, receipt: sandbox.Own(p.Name, p.Title)}, nil
	}
	var needs []string
	if d.sys.GOOS == "linux" {
		needs = []string{"bwrap"}
	}
	if err := d.sys.Check(ctx, "Ensemble's sandbox for "+p.Title+", which has no OS sandbox of its own here,", needs...); err != nil {
		return confinement{}, err
	}
	return confinement{ours: true, receipt: sandbox.Whole(p.Title)}, nil
}

// agent is the agent as Ensemble's sandbox holds it whole.
func (d *Driver) agent(spec engines.Spec, home string, env []string, tmp, bin string, args []string) sandbox.Agent {
	h := agentHome(spec, home)
	getenv := func(k string) string { return sandbox.Getenv(env, k) }
	a := sandbox.Agent{Name: d.p.Name, Bin: bin, Args: args, Env: env, Folder: spec.Folder, Home: h, Tmp: tmp,
		Prime: d.p.Prime, Log: d.log}
	if d.p.State != nil {
		a.State = d.p.State(h, getenv)
	}
	if d.p.Config != nil {
		a.Config = d.p.Config(h, getenv)
	}
	return a
}

// agentHome is the agent's HOME: the spec's, else the person's.
func agentHome(spec engines.Spec, home string) string {
	if spec.Home != "" {
		return spec.Home
	}
	return home
}

// find looks the agent's program up on the trusted path ([agentproc.TrustedPath]).
func find(p Profile, home, folder string) (string, error) {
	hint := fmt.Sprintf("%s (%s) was not found on your PATH or in the usual install folders; install it, run `%s` once to sign in, and try again",
		p.Title, p.Programs[0], p.Login)
	return agentproc.Find(home, folder, p.Programs, nil, hint)
}

// agentEnv is base without the key variables, the host session's and p's Drop, HOME set to home when given, PATH set
// to path, then p's own variables, then extra (see [agentproc.Env]).
func agentEnv(base []string, p Profile, spec engines.Spec, path string) []string {
	drop := map[string]bool{}
	for _, k := range append(slices.Clone(keyVariables), p.Drop...) {
		drop[k] = true
	}
	var own map[string]string
	if p.Env != nil {
		own = p.Env(spec)
	}
	return agentproc.Env(base, func(k string) bool { return drop[k] || agentproc.HostSession(k) }, spec.Home, path, own, spec.Env)
}

// run is one running agent.
type run struct {
	cmd    *exec.Cmd
	log    *slog.Logger
	stdin  *os.File
	stderr *tail
	tmp    string

	stop     context.CancelFunc // ends the protocol: session/cancel
	stopOnce sync.Once
	exited   chan struct{}
	done     chan struct{}
	res      engines.Result
	err      error
}

func (d *Driver) start(ctx context.Context, bin, home string, spec engines.Spec, host engines.Host, conf confinement) (_ *run, err error) {
	p := d.p
	// The run's own folder holds the files its command line names: an MCP config, a chat's rules.
	withMCPFile := p.MCPFile && (spec.MCP.URL != "" || spec.MCP.Command != "")
	withChatArgs := spec.Chat && p.ChatArgs != nil
	var tmp, mcpFile string
	if withMCPFile || withChatArgs || conf.ours {
		if tmp, err = os.MkdirTemp("", "ensemble-"+p.Name+"-"); err != nil {
			return nil, fmt.Errorf("%s: start: %w", p.Name, err)
		}
		defer func() {
			if err != nil {
				os.RemoveAll(tmp)
			}
		}()
	}
	if withMCPFile {
		if mcpFile, err = writeMCPConfig(tmp, spec.MCP); err != nil {
			return nil, fmt.Errorf("%s: start: %w", p.Name, err)
		}
	}
	// The agent's own sandbox flag stays off inside Ensemble's.
	argSpec := spec
	argSpec.Sandbox.On = conf.own
	args := p.Args(argSpec, mcpFile)
	if withChatArgs {
		more, cerr := p.ChatArgs(spec, tmp)
		if cerr != nil {
			return nil, fmt.Errorf("%s: start: %w", p.Name, cerr)
		}
		args = append(args, more...)
	}
	path := strings.Join(agentproc.TrustedPath(home, spec.Folder), string(os.PathListSeparator))
	env := agentEnv(d.environ(), p, spec, path)
	prog := bin
	if conf.ours {
		if prog, args, err = d.sys.Wrap(ctx, spec.Sandbox, d.agent(spec, home, env, tmp, bin, args)); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(prog, args...)
	cmd.Dir = spec.Folder
	cmd.Env = env
	agentproc.OwnGroup(cmd)

	var files []*os.File
	pipe := func() (*os.File, *os.File) {
		r, w, perr := os.Pipe()
		if perr != nil && err == nil {
			err = perr
		}
		files = append(files, r, w)
		return r, w
	}
	inR, inW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	if err == nil {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		err = cmd.Start()
	}
	if err != nil {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: %v", engines.ErrNotInstalled, bin, err)
		}
		return nil, fmt.Errorf("%s: start %s: %w", p.Name, bin, err)
	}
	inR.Close()
	outW.Close()
	errW.Close()

	runCtx, stop := context.WithCancel(context.Background())
	r := &run{cmd: cmd, log: d.log, stdin: inW, stderr: newTail(16 << 10), tmp: tmp, stop: stop,
		exited: make(chan struct{}), done: make(chan struct{})}
	d.log.Debug("acp agent started", "agent", p.Name, "pid", cmd.Process.Pid, "bin", bin, "folder", spec.Folder, "resume", spec.Resume)

	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait(); close(r.exited) }()
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		_, _ = io.Copy(io.MultiWriter(r.stderr, logWriter{d.log, p.Name}), errR)
	}()
	go func() {
		res, serr := Serve(runCtx, p, spec, host, inW, outR, d.log)
		r.end(res, serr, outR, errR, errDone, waitErr, p)
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = r.Stop(context.Background())
		case <-r.done:
		}
	}()
	return r, nil
}

// end closes the agent's input, ends its process group (gently, then not), and records the result.
func (r *run) end(res engines.Result, err error, outR, errR *os.File, errDone chan struct{}, waitErr chan error, p Profile) {
	r.stdin.Close()
	select {
	case <-r.exited:
	case <-time.After(closeGrace):
		_ = agentproc.SignalGroup(r.cmd, false)
		select {
		case <-r.exited:
		case <-time.After(termGrace):
		}
	}
	// Whatever the agent left running in its group goes with it.
	_ = agentproc.SignalGroup(r.cmd, true)
	werr := <-waitErr
	outR.Close()
	select {
	case <-errDone:
	case <-time.After(drainGrace):
	}
	errR.Close()
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
	}
	if err != nil && !errors.Is(err, engines.ErrStopped) && !errors.Is(err, engines.ErrSignedOut) {
		if last := lastLine(r.stderr.String()); last != "" {
			err = fmt.Errorf("%w (%s exited: %v: %s)", err, p.Name, werr, last)
		}
	}
	r.res, r.err = res, err
	r.log.Debug("acp agent ended", "agent", p.Name, "session", res.SessionID, "gone", res.Gone, "exit", werr, "err", err)
	close(r.done)
}

// Wait blocks until the run ends.
func (r *run) Wait() (engines.Result, error) {
	<-r.done
	return r.res, r.err
}

// Stop cancels the turn (session/cancel), then ends the agent's whole process group. It returns
// once the run has ended, or when ctx ends (the group is then killed outright).
func (r *run) Stop(ctx context.Context) error {
	r.stop()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		_ = agentproc.SignalGroup(r.cmd, true)
		return ctx.Err()
	}
}

// writeMCPConfig writes the run's MCP server as Copilot's --additional-mcp-config file (mode 0600),
// with a day's timeout so ask_person waits for the person.
func writeMCPConfig(dir string, m engines.MCPServer) (string, error) {
	name := m.Name
	if name == "" {
		name = "ensemble"
	}
	srv := map[string]any{"tools": []string{"*"}, "timeout": 86400000}
	if m.URL != "" {
		srv["type"], srv["url"] = "http", m.URL
		if m.Headers != nil {
			srv["headers"] = m.Headers
		}
	} else {
		srv["type"], srv["command"], srv["args"] = "local", m.Command, m.Args
		if m.Env != nil {
			srv["env"] = m.Env
		}
	}
	b, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{name: srv}}, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "mcp-config.json")
	return path, os.WriteFile(path, b, 0o600)
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
		t.b = t.b[len(t.b)-t.max:]
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

// logWriter logs the agent's standard error at debug level.
type logWriter struct {
	log  *slog.Logger
	name string
}

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Debug("acp agent stderr", "agent", w.name, "text", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
