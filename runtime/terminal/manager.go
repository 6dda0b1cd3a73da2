package terminal

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ensemblework/ensemble/runtime/problem"
)

// Options configure a Manager.
type Options struct {
	// Max is how many sessions may be open at once; DefaultMax when zero.
	Max int
	// Shell is the shell to run; the person's login shell ($SHELL, else /bin/bash, else /bin/sh)
	// when empty.
	Shell string
	// Home is where a session starts when it is given no folder; the person's home when empty.
	Home string
	// Host, when set, starts each session in a terminal host of its own, which outlives this
	// process; [Manager.Reattach] attaches to them again. Unix only: elsewhere it is ignored.
	Host *HostOptions
	Log  *slog.Logger
}

// Manager keeps the open sessions.
type Manager struct {
	opts Options

	mu       sync.Mutex // guards the following fields
	sessions map[string]*Session
	closed   bool
}

// New returns a Manager.
func New(opts Options) *Manager {
	if opts.Max <= 0 {
		opts.Max = DefaultMax
	}
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Manager{opts: opts, sessions: map[string]*Session{}}
}

// Start starts a session.
func (m *Manager) Start(o StartOptions) (*Session, error) {
	if runtime.GOOS == "windows" {
		return nil, ErrUnsupported
	}
	folder := o.Folder
	if folder == "" {
		folder = m.opts.Home
	}
	if !filepath.IsAbs(folder) {
		return nil, problem.Invalid("The folder %q is not a full path (one that starts at /).", o.Folder)
	}
	if fi, err := os.Stat(folder); err != nil || !fi.IsDir() {
		return nil, problem.Invalid("There is no folder %s.", folder)
	}
	folder = filepath.Clean(folder)
	cols, rows := clampSize(o.Cols, o.Rows)
	shell := o.Shell
	if shell == "" {
		shell = m.shell()
	}
	args := []string{"-l"} // a login shell, as a terminal window opens: the person's profile and PATH
	if o.Args != nil {
		args = append([]string(nil), o.Args...)
	}
	if o.Command != "" {
		args = append(args, "-c", o.Command)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if len(m.sessions) >= m.opts.Max {
		return nil, fmt.Errorf("%w: at most %d; close one first", ErrTooMany, m.opts.Max)
	}
	id := newID()
	s := newSession(id, folder, o.Command, cols, rows)
	s.node = o.Node
	env := environ()
	if o.Drop != nil {
		env = slices.DeleteFunc(env, func(kv string) bool { k, _, _ := strings.Cut(kv, "="); return o.Drop(k) })
	}
	env = append(env, o.Env...)
	var proc process
	var err error
	if m.opts.Host != nil && hostsWork {
		proc, err = startHost(m.opts.Host, hostSpec{ID: id, Node: o.Node, Folder: folder, Command: o.Command,
			Shell: shell, Args: args, Env: env, Cols: cols, Rows: rows, MaxAge: o.MaxAge})
	} else {
		proc, err = startProcess(shell, args, folder, env, cols, rows)
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", shell, err)
	}
	s.proc = proc
	m.runLocked(s)
	m.opts.Log.Info("terminal started", "id", id, "shell", shell, "folder", folder, "command", o.Command, "host", m.opts.Host != nil)
	return s, nil
}

// runLocked keeps s and runs it until it ends.
func (m *Manager) runLocked(s *Session) {
	m.sessions[s.id] = s
	go s.run(func() {
		m.mu.Lock()
		delete(m.sessions, s.id)
		m.mu.Unlock()
		m.opts.Log.Info("terminal ended", "id", s.id, "exit", s.ExitCode())
	})
}

// Get returns the open session with id, or nil.
func (m *Manager) Get(id string) *Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sessions[id]
}

// List describes the open sessions, oldest first.
func (m *Manager) List() []Info {
	m.mu.Lock()
	list := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		list = append(list, s)
	}
	m.mu.Unlock()
	out := make([]Info, 0, len(list))
	for _, s := range list {
		out = append(out, s.Info())
	}
	slices.SortFunc(out, func(a, b Info) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

// Close ends every session and refuses new ones.
func (m *Manager) Close() { m.endAll(func(s *Session) { s.Close() }) }

// endAll refuses new sessions and ends each open one with end, all at once, returning when every
// end has.
func (m *Manager) endAll(end func(*Session)) {
	m.mu.Lock()
	m.closed = true
	list := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		list = append(list, s)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range list {
		wg.Go(func() { end(s) })
	}
	wg.Wait()
}

// shell is the person's login shell.
func (m *Manager) shell() string {
	if m.opts.Shell != "" {
		return m.opts.Shell
	}
	if sh := os.Getenv("SHELL"); sh != "" && filepath.IsAbs(sh) {
		if p, err := exec.LookPath(sh); err == nil {
			return p
		}
	}
	for _, sh := range []string{"/bin/bash", "/bin/sh"} {
		if _, err := os.Stat(sh); err == nil {
			return sh
		}
	}
	return "/bin/sh"
}

// environ is the runtime's environment with what a terminal sets itself.
func environ() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "TERM" || k == "COLORTERM" || k == "TERM_PROGRAM" || k == "COLUMNS" || k == "LINES"
	})
	return append(env, "TERM=xterm-256color", "COLORTERM=truecolor", "TERM_PROGRAM=Ensemble")
}

func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "ts" + hex.EncodeToString(b)
}
