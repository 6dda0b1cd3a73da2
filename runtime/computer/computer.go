package computer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/engines/sandbox"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Limits of spec 002 §8.13.
const (
	MaxRunTime      = 900 * time.Second // a command's longest run
	ForegroundWait  = time.Minute       // how long a call waits before its command goes on in the background
	ReturnedOutput  = 64 << 10          // the output one answer carries
	KeptOutput      = 1 << 20           // the output kept per command
	OutputKeptFor   = 6 * time.Hour     // how long an ended command's output stays readable
	MaxFileSize     = 1 << 20           // computer_files_write
	MaxHTTPAnswer   = 64 << 10          // computer_http
	MaxShareSize    = 100 << 20         // node_share_file
	maxRunningPerID = 8                 // background commands one node keeps going at once
)

// Options set up a Computer.
type Options struct {
	Home    string
	DataDir string
	// Workspace is <data>/workspace: the node folders are in nodes/, the run folders in runs/.
	Workspace string
	Binary    string // Ensemble's own program
	Runtime   string // the runtime's own address, host:port
	// Sandbox is the OS sandbox commands run in; the zero System is this computer's own.
	Sandbox *sandbox.System
	// Hide hides kept secret values in what a node reads; nil hides nothing.
	Hide func(string) string
	Log  *slog.Logger
	Now  func() time.Time
	// Temp are the shared temporary folders every command may use (/tmp and /var/tmp, or
	// the system's own).
	Temp []string
	// Store and Writer keep the owner's answers (kept.go).
	Store  *store.Store
	Writer *ledger.Writer
	// Askpass is the askpass program sudo runs (Binary when empty; tests), and SudoProgram the
	// sudo to run ("sudo" on the PATH when empty).
	Askpass, SudoProgram string
	// ForegroundWait overrides ForegroundWait (tests).
	ForegroundWait time.Duration
}

// Computer runs a node's own calls on this computer.
type Computer struct {
	// Answers are the owner's answers kept on this computer.
	Answers Answers

	o         Options
	sandboxed bool
	why       string // why there is no sandbox, when there is none

	mu   sync.Mutex
	cmds map[string]*Command
}

// New returns a Computer. It checks once whether the OS sandbox works here.
func New(o Options) *Computer {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Hide == nil {
		o.Hide = func(s string) string { return s }
	}
	if o.Temp == nil {
		o.Temp = []string{filepath.Clean(os.TempDir())}
		if runtime.GOOS != "windows" {
			o.Temp = append(o.Temp, "/tmp", "/var/tmp")
		}
	}
	if o.ForegroundWait <= 0 {
		o.ForegroundWait = ForegroundWait
	}
	if o.Sandbox == nil {
		sys := sandbox.Local()
		o.Sandbox = &sys
	}
	c := &Computer{o: o, cmds: map[string]*Command{}, Answers: Answers{Store: o.Store, Writer: o.Writer}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := o.Sandbox.Check(ctx, "A node's command"); err != nil {
		c.why = err.Error()
		o.Log.Info("computer: no OS sandbox for nodes' commands", "why", c.why)
	} else {
		c.sandboxed = true
	}
	return c
}

// Hide hides kept secret values in text, in every form the redactor knows.
func (c *Computer) Hide(text string) string { return c.o.Hide(text) }

// Sandboxed reports whether commands run inside the OS sandbox here, and if not, why.
func (c *Computer) Sandboxed() (bool, string) { return c.sandboxed, c.why }

// NodeFolder is the node's own folder, <workspace>/nodes/<handle>, made on first use (0700).
func (c *Computer) NodeFolder(handle string) (string, error) {
	if handle == "" || strings.ContainsAny(handle, `/\`) || handle == "." || handle == ".." {
		return "", fmt.Errorf("computer: %q is not a node's handle", handle)
	}
	dir := filepath.Join(c.o.Workspace, "nodes", handle)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("computer: make @%s's folder: %w", handle, err)
	}
	return dir, nil
}

// Policy is the decision order's view of this computer for a node, with the kept answers that
// hold now.
func (c *Computer) Policy(kept []Scope, unattended bool) Policy {
	return Policy{Home: c.o.Home, DataDir: c.o.DataDir, Workspace: c.o.Workspace, Binary: c.o.Binary, Runtime: c.o.Runtime,
		Own:  []string{filepath.Join(c.o.Workspace, "nodes"), filepath.Join(c.o.Workspace, "runs")},
		Kept: kept, Unattended: unattended, Sandboxed: c.sandboxed, Temp: c.o.Temp}
}

// Floor is the judge's settings that leave only its absolute refusals, for a command in folder:
// what a terminal's line judge weighs each line with.
func (c *Computer) Floor(folder string) judge.Settings {
	return judgeSettings(Call{Folder: folder}, c.Policy(nil, false))
}

// WrapShell is the program and arguments that run a shell on a terminal in the OS sandbox with
// folder and write changeable, as a node's commands run; without a sandbox here, the shell itself.
func (c *Computer) WrapShell(folder string, write []string, bin string, args []string) (string, []string, error) {
	if !c.sandboxed {
		return bin, args, nil
	}
	return c.o.Sandbox.Command(c.sandboxFor(RunRequest{Folder: folder, Write: write}), sandbox.Extra{Terminal: true}, folder, bin, args)
}
