// Package terminal runs the person's own shells in pseudo-terminals and keeps each one's screen, so
// a window that connects late, or again, sees what is on the screen before the live output.
//
// PTYs are for people (DESIGN.md, principle 1): agents never run here; this is the person's
// terminal, and what they type is theirs, not judged. A node's own terminals (runtime/node's
// terminal tools) run on a Manager of their own, and what a node types is judged there before it
// reaches [Session.Write].
//
// # A session's life
//
// [Manager.Start] starts the shell (or an agent's sign-in command in the person's login shell) in a
// new session and process group. One goroutine reads the PTY: each chunk goes to the screen (a vt
// emulator) and then to every watcher, under one lock, so [Session.Watch] can take the screen and
// subscribe at once and a watcher never sees a byte twice or misses one. A watcher that falls behind
// is dropped, saying why; it connects again and gets the screen. The session ends when its shell
// exits, or on [Session.Close], which hangs up the process group and then kills it.
//
// # Terminal hosts
//
// With [Options.Host] (the nodes' Manager), a session's PTY is held not by the runtime but by a
// terminal host, Ensemble's own program run as `ensemble terminal-host` ([HostMain]) in a
// session of its own, so a long command a node started goes on when the runtime stops or is
// upgraded, as a shell in tmux does when its window closes. The host keeps the last replayBytes of
// output and speaks a framed protocol (hostproto.go) over a unix socket in <data>/terminals, a
// 0700 folder, to one client at a time, let in by a random token in the session's 0600 json. The
// next runtime's [Manager.Reattach] attaches to every host left, replays its output into a new
// Session with the same id, and so rebuilds the screen and scrollback; [Manager.Detach] is how a
// runtime stops without ending them. A host whose shell has exited keeps the exit code for the
// next attach for hostGrace; on Windows there are no hosts.
package terminal

import (
	"errors"
	"time"
)

// Limits.
const (
	// DefaultMax is how many sessions a Manager keeps open when Options.Max is zero.
	DefaultMax = 8
	// Scrollback is how many lines above the screen a session keeps for a window that connects.
	Scrollback = 1000
	// watchBuffer is how many chunks of output a watcher may have unread before it is dropped.
	watchBuffer = 512
	// hangupGrace is how long Close waits after SIGHUP before it kills the process group.
	hangupGrace = time.Second
)

// Errors.
var (
	ErrTooMany     = errors.New("too many terminals open")
	ErrClosed      = errors.New("the terminal has ended")
	ErrUnsupported = errors.New("terminals are not supported on Windows yet")
)

// Info describes a session.
type Info struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Folder    string    `json:"folder"`
	Command   string    `json:"command,omitempty"` // the sign-in command it runs; "" for a shell
	Cols      int       `json:"cols"`
	Rows      int       `json:"rows"`
	StartedAt time.Time `json:"startedAt"`
	Watchers  int       `json:"watchers"`
}

// StartOptions say what a new session runs, where, and at what size.
type StartOptions struct {
	// Folder is where the shell starts: an absolute path to a folder; "" is the person's home.
	Folder string
	// Command, when set, runs in the person's login shell instead of an interactive shell (an
	// agent's sign-in command). It must come from the program, never from a request.
	Command string
	// Cols and Rows are the size; 80×24 when zero.
	Cols, Rows int
	// Shell, when set, is the program to run instead of the Manager's shell.
	Shell string
	// Args, when set, are the shell's arguments instead of a login shell's (a node's own shell),
	// and Env is added to its environment. Like Command they come from the program.
	Args []string
	Env  []string
	// Drop, when set, leaves the variables it names out of the runtime's environment the shell
	// starts from (the runtime's own tokens and model keys, for a node's shell).
	Drop func(name string) bool
	// Node is who the session is for (a node's id), kept by a terminal host so that
	// [Manager.Reattach] can say whose a session is.
	Node string
	// MaxAge, when set, is how long a terminal host keeps the shell even with no runtime attached
	// (a node's terminal's age limit); an in-process session leaves its age to the caller.
	MaxAge time.Duration
}

// clampSize keeps a size within what a screen can be.
func clampSize(cols, rows int) (int, int) {
	if cols <= 0 {
		cols = 80
	}
	if rows <= 0 {
		rows = 24
	}
	return min(cols, 1000), min(rows, 500)
}
