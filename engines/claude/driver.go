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
	"log/slog"
	"os"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
)

// Driver starts runs of Claude Code. Make one with [New].
type Driver struct {
	bin      string
	log      *slog.Logger
	judgeAll bool
	environ  func() []string
}

var _ engines.Driver = (*Driver)(nil)

// Option configures a [Driver].
type Option func(*Driver)

// WithBinary runs the claude at path instead of looking it up on the
// trusted path (tests, or a copy the person chose in settings).
func WithBinary(path string) Option { return func(d *Driver) { d.bin = path } }

// WithLogger logs protocol trouble and the CLI's standard error to log.
func WithLogger(log *slog.Logger) Option { return func(d *Driver) { d.log = log } }

// WithOwnRules leaves the calls Claude Code would run without asking (reads,
// and what the person's own allow rules let through) to Claude Code. By
// default every tool call is put to the host.
func WithOwnRules() Option { return func(d *Driver) { d.judgeAll = false } }

// New returns a Claude Code driver.
func New(opts ...Option) *Driver {
	d := &Driver{log: slog.New(slog.DiscardHandler), judgeAll: true, environ: os.Environ}
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
	return start(ctx, d, bin, home, spec, host)
}

// binary is the agent's program: the one set with WithBinary, else the one on the trusted PATH
// (never inside folder).
func (d *Driver) binary(home, folder string) (string, error) {
	return agentproc.Program(d.bin, installHint, home, folder, Find)
}
