package terminal

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// keptModes are the terminal modes a program turns on that a window connecting later must turn on
// too, or its keys and mouse would speak the wrong dialect to the program (arrow keys in vim, a
// paste in a shell, a click in a TUI).
var keptModes = map[int]bool{
	1:    true, // application cursor keys
	1000: true, // mouse: clicks
	1002: true, // mouse: drags
	1003: true, // mouse: all motion
	1006: true, // mouse: SGR encoding
	2004: true, // bracketed paste
}

// Session is one shell in a pseudo-terminal, its screen, and the windows watching it.
type Session struct {
	id      string
	node    string // who the session is for (StartOptions.Node)
	folder  string
	command string
	started time.Time
	proc    process
	replies *io.PipeWriter // the emulator's answers to the program's queries; closed when it ends
	done    chan struct{}  // closed once the session has ended and been cleaned up
	nwatch  atomic.Int32   // how many windows watch; read without mu by the reply pump
	pump    sync.Once      // starts pumpReplies

	mu         sync.Mutex // guards the following fields
	emu        *vt.Emulator
	modes      map[int]bool
	title      string
	cols, rows int
	watchers   map[*Watcher]struct{}
	ended      bool
	exitCode   int
	output     chan struct{} // closed at the next output (view.go)
	prompts    int           // how many prompt marks the shell printed (view.go)
	markTail   string        // the end of the last output, for a mark split across reads
}

// Watcher is one window's view of a session: C delivers the output after the screen it started
// with, and is closed when the session ends or the watcher falls behind (Reason says which).
type Watcher struct {
	C      <-chan []byte
	ch     chan []byte
	s      *Session
	reason string // guarded by s.mu
}

// process is the shell the session runs, in its own process group.
type process interface {
	io.ReadWriter
	resize(cols, rows int) error
	hangup()                          // SIGHUP to the process group, then SIGKILL after hangupGrace
	wait() (int, error)               // waits for the shell itself to exit; its exit code
	cleanup(readDone <-chan struct{}) // after the shell exits: the rest of its group, the PTY
}

func newSession(id, folder, command string, cols, rows int) *Session {
	s := &Session{
		id: id, folder: folder, command: command, started: time.Now(), done: make(chan struct{}),
		emu: vt.NewEmulator(cols, rows), modes: map[int]bool{}, cols: cols, rows: rows,
		watchers: map[*Watcher]struct{}{},
	}
	s.emu.SetScrollbackSize(Scrollback)
	s.emu.SetCallbacks(vt.Callbacks{
		Title: func(t string) { s.title = t }, // called from Write, under mu
		EnableMode: func(m ansi.Mode) {
			if _, dec := m.(ansi.DECMode); dec && keptModes[m.Mode()] {
				s.modes[m.Mode()] = true
			}
		},
		DisableMode: func(m ansi.Mode) {
			if _, dec := m.(ansi.DECMode); dec {
				delete(s.modes, m.Mode())
			}
		},
	})
	s.replies = s.emu.InputPipe().(*io.PipeWriter)
	return s
}

// run pumps the PTY into the screen and the watchers until the shell exits, then cleans up.
func (s *Session) run(onEnd func()) {
	s.pump.Do(func() { go s.pumpReplies(false) })
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := s.proc.Read(buf)
			if n > 0 {
				s.feed(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	code, _ := s.proc.wait()
	s.proc.cleanup(readDone)
	s.end(code)
	onEnd()
}

// restore draws replay, the output a terminal host kept, on a reattached session's screen before
// run, answering none of the queries in it: the program asked them long ago, of a screen that is
// gone.
func (s *Session) restore(replay []byte) {
	s.pump.Do(func() { go s.pumpReplies(true) })
	s.feed(replay)
	s.replies.Write(replayEnd)
}

// replayEnd is written into the emulator's answers after a replay: what comes before it answers the
// replay, and is dropped. The emulator writes its answers while it parses (under Write), so
// none of the replay's can come after it.
var replayEnd = []byte("\x00ensemble:replayed\x00")

// pumpReplies reads what the emulator answers to the program's queries (the cursor's position, the
// terminal's kind). While a window watches, the window's own terminal answers, so these are
// dropped; with nobody watching they go to the program, which would otherwise wait for an answer.
// With quiet, everything up to replayEnd is dropped too. It takes no lock: the emulator writes
// these while feed holds mu.
func (s *Session) pumpReplies(quiet bool) {
	buf := make([]byte, 1024)
	var held []byte // while quiet: the end of what was read, for a replayEnd split across reads
	for {
		n, err := s.emu.Read(buf)
		out := buf[:n]
		if quiet && n > 0 {
			held = append(held, out...)
			i := bytes.Index(held, replayEnd)
			if i < 0 {
				held = held[max(0, len(held)-len(replayEnd)):]
				out = nil
			} else {
				out, held, quiet = held[i+len(replayEnd):], nil, false
			}
		}
		if len(out) > 0 && s.nwatch.Load() == 0 {
			s.proc.Write(out)
		}
		if err != nil {
			return
		}
	}
}

// feed puts output on the screen and sends it to every watcher, dropping one that falls behind.
func (s *Session) feed(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emu.Write(p)
	s.notedLocked(p)
	for w := range s.watchers {
		select {
		case w.ch <- bytes.Clone(p):
		default:
			s.dropLocked(w, "This window fell behind the terminal's output; connect again for the current screen.")
		}
	}
}

func (s *Session) dropLocked(w *Watcher, reason string) {
	if _, ok := s.watchers[w]; !ok {
		return
	}
	delete(s.watchers, w)
	s.nwatch.Add(-1)
	w.reason = reason
	close(w.ch)
}

func (s *Session) end(code int) {
	s.mu.Lock()
	s.ended = true
	s.exitCode = code
	if s.output != nil {
		close(s.output) // wakes a Settle
		s.output = nil
	}
	for w := range s.watchers {
		s.dropLocked(w, fmt.Sprintf("The shell ended (exit code %d).", code))
	}
	s.mu.Unlock()
	s.replies.CloseWithError(io.EOF) // ends pumpReplies; the emulator itself is never closed (see pumpReplies)
	close(s.done)
}

// ID is the session's id.
func (s *Session) ID() string { return s.id }

// Node is who the session is for, as StartOptions.Node said; a reattached session keeps it.
func (s *Session) Node() string { return s.node }

// Done is closed once the session has ended and its processes and PTY are gone.
func (s *Session) Done() <-chan struct{} { return s.done }

// ExitCode is the shell's exit code, once Done is closed.
func (s *Session) ExitCode() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode
}

// Info describes the session now.
func (s *Session) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	title := s.title
	if title == "" {
		title = "Terminal in " + s.folder
	}
	return Info{ID: s.id, Title: title, Folder: s.folder, Command: s.command, Cols: s.cols, Rows: s.rows,
		StartedAt: s.started, Watchers: len(s.watchers)}
}

// Write types p into the terminal, as the person's keys.
func (s *Session) Write(p []byte) (int, error) {
	select {
	case <-s.done:
		return 0, ErrClosed
	default:
	}
	return s.proc.Write(p)
}

// Resize changes the terminal's size; the program gets SIGWINCH.
func (s *Session) Resize(cols, rows int) error {
	cols, rows = clampSize(cols, rows)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return ErrClosed
	}
	if cols == s.cols && rows == s.rows {
		return nil
	}
	if err := s.proc.resize(cols, rows); err != nil {
		return fmt.Errorf("resize terminal: %w", err)
	}
	s.emu.Resize(cols, rows)
	s.cols, s.rows = cols, rows
	return nil
}

// Watch takes the screen as it is now (bytes that redraw it, scrollback first, on a fresh terminal)
// and subscribes to what comes after it, at once: nothing is missed or sent twice.
func (s *Session) Watch() (screen []byte, w *Watcher, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil, nil, ErrClosed
	}
	ch := make(chan []byte, watchBuffer)
	w = &Watcher{C: ch, ch: ch, s: s}
	s.watchers[w] = struct{}{}
	s.nwatch.Add(1)
	return s.screenLocked(), w, nil
}

// Stop ends the watch.
func (w *Watcher) Stop() {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.dropLocked(w, "Stopped watching.")
}

// Reason says why C was closed.
func (w *Watcher) Reason() string {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.reason
}

// Text is the screen as plain text, trailing blanks trimmed.
func (s *Session) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.String()
}

// screenLocked renders the screen for a terminal that has just been reset: the scrollback, the
// screen's lines with their colours, the cursor, and the modes the program turned on.
func (s *Session) screenLocked() []byte {
	var b strings.Builder
	b.WriteString("\x1bc") // reset: the window starts from nothing
	if s.emu.IsAltScreen() {
		b.WriteString("\x1b[?1049h")
	} else if sb := s.emu.Scrollback(); sb != nil {
		for _, l := range sb.Lines() {
			b.WriteString(l.Render())
			b.WriteString("\x1b[0m\r\n")
		}
	}
	for i, l := range strings.Split(s.emu.Render(), "\n") {
		if i > 0 {
			b.WriteString("\x1b[0m\r\n")
		}
		b.WriteString(l)
	}
	b.WriteString("\x1b[0m")
	pos := s.emu.CursorPosition()
	fmt.Fprintf(&b, "\x1b[%d;%dH", pos.Y+1, pos.X+1)
	if s.emu.CursorHidden() {
		b.WriteString("\x1b[?25l")
	}
	modes := make([]int, 0, len(s.modes))
	for m := range s.modes {
		modes = append(modes, m)
	}
	slices.Sort(modes)
	for _, m := range modes {
		fmt.Fprintf(&b, "\x1b[?%dh", m)
	}
	return []byte(b.String())
}

// Close ends the session: the shell's process group is hung up, then killed. It returns once the
// session is cleaned up.
func (s *Session) Close() error {
	s.proc.hangup()
	<-s.done
	return nil
}
