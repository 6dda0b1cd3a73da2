// Package claude drives Claude Code (the person's own `claude`) through its
// stream-json control protocol: every tool call it wants to make goes to the
// host's judge through can_use_tool, its questions (AskUserQuestion) go to
// the person, and every message it prints becomes an [engines.Event].
//
// # Usage
//
//	d := claude.New(claude.WithLogger(log))
//	run, err := d.Start(ctx, engines.Spec{Folder: dir, Prompt: "Fix the tests"}, host)
//	...
//	res, err := run.Wait()
//
// The CLI runs with pipes (never a PTY) in the work folder, in a process group
// of its own, with the API-key variables removed from its environment, and
// with per-run settings and MCP config written to a private temporary folder
// that is removed when the run ends.
package claude

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
	"github.com/ensemblework/ensemble/engines/sandbox"
)

// Driver starts runs of Claude Code. Make one with [New].
type Driver struct {
	bin      string
	log      *slog.Logger
	judgeAll bool
	environ  func() []string
	sys      sandbox.System
	record   io.Writer
}

var _ engines.Driver = (*Driver)(nil)

// Option configures a [Driver].
type Option func(*Driver)

// WithBinary runs the claude at path instead of looking it up on the
// trusted path (tests, or a copy the person chose in settings).
func WithBinary(path string) Option { return func(d *Driver) { d.bin = path } }

// WithLogger logs protocol trouble and the CLI's standard error to log.
func WithLogger(log *slog.Logger) Option { return func(d *Driver) { d.log = log } }

// WithRecord copies everything the agent prints to w: the transcripts the golden tests replay.
func WithRecord(w io.Writer) Option { return func(d *Driver) { d.record = w } }

// WithSystem checks the sandbox's needs against sys instead of this computer (tests).
func WithSystem(sys sandbox.System) Option { return func(d *Driver) { d.sys = sys } }

// WithOwnRules leaves the calls Claude Code would run without asking (reads,
// and what the person's own allow rules let through) to Claude Code. By
// default every tool call is put to the host.
func WithOwnRules() Option { return func(d *Driver) { d.judgeAll = false } }

// New returns a Claude Code driver.
func New(opts ...Option) *Driver {
	d := &Driver{log: slog.New(slog.DiscardHandler), judgeAll: true, environ: os.Environ, sys: sandbox.Local()}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Name is "claude".
func (d *Driver) Name() string { return "claude" }

// Start starts claude on spec. It returns once the process is running; the
// brief is sent after Claude Code acknowledges initialize.
func (d *Driver) Start(ctx context.Context, spec engines.Spec, host engines.Host) (engines.Run, error) {
	home, bin, err := agentproc.Locate("claude", spec, host, d.binary)
	if err != nil {
		return nil, err
	}
	enf := sandbox.Off
	if spec.Sandbox.On {
		if enf, err = d.sandbox(ctx); err != nil {
			return nil, err
		}
	}
	return start(ctx, d, bin, home, spec, host, enf)
}

// sandbox checks that Claude Code's own sandbox can run here: without what it needs, Claude Code
// would start without it (or, told not to, fail with less to go on).
func (d *Driver) sandbox(ctx context.Context) (engines.Enforcement, error) {
	if err := d.sys.Check(ctx, "Claude Code's sandbox", sandboxNeeds(d.sys.GOOS)...); err != nil {
		return engines.Enforcement{}, err
	}
	return sandbox.Own("claude", "Claude Code"), nil
}

// sandboxNeeds are the programs Claude Code's sandbox-runtime needs on goos.
func sandboxNeeds(goos string) []string {
	if goos == "linux" {
		return []string{"bwrap", "socat"}
	}
	return nil
}

// binary is the agent's program: the one set with WithBinary, else the one on the trusted PATH
// (never inside folder).
func (d *Driver) binary(home, folder string) (string, error) {
	return agentproc.Program(d.bin, installHint, home, folder, Find)
}
