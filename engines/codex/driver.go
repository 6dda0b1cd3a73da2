// Package codex drives Codex (the person's own `codex`) through `codex
// app-server`, its JSON-RPC protocol over stdio: every command and file change
// Codex asks approval for goes to the host's judge, its questions
// (request_user_input, MCP servers' forms) go to the person, and every item
// it reports becomes an [engines.Event].
//
// # Usage
//
//	d := codex.New(codex.WithLogger(log))
//	run, err := d.Start(ctx, engines.Spec{Folder: dir, Prompt: "Fix the tests"}, host)
//	...
//	res, err := run.Wait()
//
// The CLI runs with pipes (never a PTY) in the work folder, in a process group
// of its own (on Linux it dies with the runtime), with the API-key variables
// removed from its environment unless the person's own config.toml names one
// as its provider's key. One run is one turn in one thread: a new thread, or
// Spec.Resume's (thread/resume). The thread asks before every command Codex
// does not consider safe (approvalPolicy "untrusted") and works in Codex's
// own sandbox (workspace-write); the folder's own .codex settings load only
// when Spec.Trusted is set.
package codex

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
	"github.com/ensemblework/ensemble/engines/sandbox"
)

// Driver starts runs of Codex. Make one with [New].
type Driver struct {
	bin     string
	log     *slog.Logger
	environ func() []string
	sys     sandbox.System
	record  io.Writer
}

var _ engines.Driver = (*Driver)(nil)

// Option configures a [Driver].
type Option func(*Driver)

// WithBinary runs the codex at path instead of looking it up on the trusted
// path (tests, or a copy the person chose in settings).
func WithBinary(path string) Option { return func(d *Driver) { d.bin = path } }

// WithLogger logs protocol trouble and the CLI's standard error to log.
func WithLogger(log *slog.Logger) Option { return func(d *Driver) { d.log = log } }

// WithRecord copies everything the agent prints to w: the transcripts the golden tests replay.
func WithRecord(w io.Writer) Option { return func(d *Driver) { d.record = w } }

// WithSystem checks the sandbox's needs against sys instead of this computer (tests).
func WithSystem(sys sandbox.System) Option { return func(d *Driver) { d.sys = sys } }

// New returns a Codex driver.
func New(opts ...Option) *Driver {
	d := &Driver{log: slog.New(slog.DiscardHandler), environ: os.Environ, sys: sandbox.Local()}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Name is "codex".
func (d *Driver) Name() string { return "codex" }

// Start starts codex app-server on spec. It returns once the process is
// running; the protocol (initialize, account/read, the thread, the turn) goes
// on in the background, and a refusal there (not signed in) ends the run with
// its error from Wait.
func (d *Driver) Start(ctx context.Context, spec engines.Spec, host engines.Host) (engines.Run, error) {
	home, bin, err := agentproc.Locate("codex", spec, host, d.binary)
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

// sandbox checks that the sandbox a run of Codex needs can run here. On Linux and macOS Codex
// runs whole inside Ensemble's: under the untrusted policy Codex re-runs a command the judge
// allowed outside its own sandbox, without asking, when its sandbox stopped it (seen as
// codex.sandbox_outcome "escalated"), so its own cannot hold the line alone. On Linux Codex's own
// sandbox works inside too (for the run's internet setting); macOS cannot nest Seatbelt. Windows
// has only Codex's own.
func (d *Driver) sandbox(ctx context.Context) (engines.Enforcement, error) {
	switch d.sys.GOOS {
	case "linux":
		if err := d.sys.Check(ctx, "Ensemble's sandbox for Codex", "bwrap"); err != nil {
			return engines.Enforcement{}, err
		}
		enf := sandbox.Whole("Codex")
		enf.Note = "Ensemble's OS sandbox confines Codex and everything it starts to the run's folders, with Codex's own sandbox inside it, and the judge decides each call."
		return enf, nil
	case "darwin":
		if err := d.sys.Check(ctx, "Ensemble's sandbox for Codex"); err != nil {
			return engines.Enforcement{}, err
		}
		return sandbox.Whole("Codex"), nil
	}
	return sandbox.Own("codex", "Codex"), nil
}

// binary is the agent's program: the one set with WithBinary, else the one on the trusted PATH
// (never inside folder).
func (d *Driver) binary(home, folder string) (string, error) {
	return agentproc.Program(d.bin, installHint, home, folder, Find)
}
