package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
	"github.com/ensemblework/ensemble/engines/sandbox"
)

// How long each step of ending the process waits before the next, harder one: the same steps,
// and the same waits, as Claude Code's and Codex's (see [agentproc.Process.Stop]).
var graces = agentproc.Graces{
	Interrupt: 5 * time.Second, // session/cancel answered, the turn wound down (cancelGrace within it)
	Close:     2 * time.Second, // stdin closed: the agent exits on its own
	Term:      3 * time.Second, // SIGTERM to the group, then SIGKILL
	Drain:     5 * time.Second, // output still open after the group is gone
}

// Driver starts runs of one ACP agent. Make one with [New], or all with [Drivers].
type Driver struct {
	p       Profile
	bin     string
	log     *slog.Logger
	environ func() []string
	sys     sandbox.System
	record  io.Writer
}

var _ engines.Driver = (*Driver)(nil)

// Option configures a [Driver].
type Option func(*Driver)

// WithBinary runs the program at path instead of looking it up on the trusted path.
func WithBinary(path string) Option { return func(d *Driver) { d.bin = path } }

// WithLogger logs protocol trouble and the agent's standard error to log.
func WithLogger(log *slog.Logger) Option { return func(d *Driver) { d.log = log } }

// WithRecord copies everything the agent prints to w: the transcripts the golden tests replay.
func WithRecord(w io.Writer) Option { return func(d *Driver) { d.record = w } }

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
	return agentproc.Env(base, func(k string) bool { return drop[k] || agentproc.HostSession(k) }, spec.Home, path, own, spec.AgentEnv())
}

// run is one running agent.
type run struct {
	proc *agentproc.Process
	log  *slog.Logger
	tmp  string

	stop   context.CancelFunc // ends the protocol: session/cancel
	served chan struct{}      // closed when Serve has returned
	res    engines.Result
	err    error
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
	proc, err := agentproc.Start(agentproc.Command{
		Name: p.Name, Path: prog, Args: args, Dir: spec.Folder, Env: env, Graces: graces, Log: d.log, Record: d.record,
		InstallHint: fmt.Sprintf("%s (%s) could not be started from %s", p.Title, p.Programs[0], bin),
	})
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.Background())
	r := &run{proc: proc, log: d.log, tmp: tmp, stop: stop, served: make(chan struct{})}
	d.log.Debug("acp agent started", "agent", p.Name, "pid", proc.Pid(), "bin", bin, "folder", spec.Folder, "resume", spec.Resume)
	proc.Serve(ctx, agentproc.Handlers{
		Out: func(out io.Reader) {
			r.res, r.err = Serve(runCtx, p, spec, host, proc.Input(), out, d.log)
			close(r.served)
			// The run is over: the agent's input closes, and an agent that does not exit then
			// goes the way every stopped agent goes.
			go func() { _ = proc.Stop(context.Background(), func(context.Context) bool { return true }) }()
			_, _ = io.Copy(io.Discard, out)
		},
		Ended: func(werr error) { r.ended(werr, p) },
		Stop:  r.Stop,
	})
	return r, nil
}

// ended records how the run ended, once the process is gone and its output read.
func (r *run) ended(werr error, p Profile) {
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
	}
	err := r.err
	if err != nil && !errors.Is(err, engines.ErrStopped) && !errors.Is(err, engines.ErrSignedOut) {
		if last := agentproc.LastLine(r.proc.Stderr()); last != "" {
			err = fmt.Errorf("%w (%s exited: %v: %s)", err, p.Name, werr, last)
		}
	}
	r.err = err
	r.log.Debug("acp agent ended", "agent", p.Name, "session", r.res.SessionID, "gone", r.res.Gone, "exit", werr, "err", err)
}

// Wait blocks until the run ends.
func (r *run) Wait() (engines.Result, error) {
	<-r.proc.Done()
	return r.res, r.err
}

// Stop cancels the turn (session/cancel), then ends the agent's whole process group, as
// [agentproc.Process.Stop] does for every agent. It returns once the run has ended, or when ctx
// ends (the group is then killed outright).
func (r *run) Stop(ctx context.Context) error {
	return r.proc.Stop(ctx, func(ictx context.Context) bool {
		r.stop()
		select {
		case <-r.served:
			return true
		case <-ictx.Done():
			return false
		}
	})
}

// writeMCPConfig writes the run's MCP server as Copilot's --additional-mcp-config file (mode 0600),
// with a day's timeout so ask_person waits for the person.
func writeMCPConfig(dir string, m engines.MCPServer) (string, error) {
	name := m.ServerName()
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
