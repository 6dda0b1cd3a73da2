//go:build !windows

package terminal

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"

	"github.com/ensemblework/ensemble/runtime/problem"
)

func newTestManager(t *testing.T, max int) *Manager {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	m := New(Options{Max: max, Shell: sh, Home: t.TempDir()})
	t.Cleanup(m.Close)
	return m
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// typeLine waits for the shell's first prompt, then types line and Enter.
func typeLine(t *testing.T, s *Session, line string) {
	t.Helper()
	waitFor(t, "the prompt", func() bool { return strings.TrimSpace(s.Text()) != "" })
	if _, err := s.Write([]byte(line + "\r")); err != nil {
		t.Fatal(err)
	}
}

func hasLine(text, want string) bool {
	return slices.ContainsFunc(strings.Split(text, "\n"), func(l string) bool { return strings.TrimSpace(l) == want })
}

func TestEchoOnScreen(t *testing.T) {
	m := newTestManager(t, 2)
	s, err := m.Start(StartOptions{Cols: 60, Rows: 10})
	if err != nil {
		t.Fatal(err)
	}
	typeLine(t, s, "echo hi")
	waitFor(t, "hi on the screen", func() bool { return hasLine(s.Text(), "hi") })
	if got := m.List(); len(got) != 1 || got[0].ID != s.ID() || got[0].Cols != 60 || !strings.HasPrefix(got[0].ID, "ts") {
		t.Fatalf("List() = %+v", got)
	}
}

func TestResizeReachesProgram(t *testing.T) {
	m := newTestManager(t, 2)
	s, err := m.Start(StartOptions{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Resize(100, 30); err != nil {
		t.Fatal(err)
	}
	typeLine(t, s, "stty size")
	waitFor(t, "stty size 30 100", func() bool { return hasLine(s.Text(), "30 100") })
	if in := s.Info(); in.Cols != 100 || in.Rows != 30 {
		t.Fatalf("Info() size = %d×%d, want 100×30", in.Cols, in.Rows)
	}
}

// TestSecondWindowGetsScreen: a window that connects later is sent the screen, which redraws the
// same text on a fresh terminal, then both see the live output.
func TestSecondWindowGetsScreen(t *testing.T) {
	m := newTestManager(t, 2)
	s, err := m.Start(StartOptions{Cols: 60, Rows: 10})
	if err != nil {
		t.Fatal(err)
	}
	_, first, err := s.Watch()
	if err != nil {
		t.Fatal(err)
	}
	typeLine(t, s, "printf '\\033[31mred\\033[0m\\n'; echo hi")
	waitFor(t, "hi on the screen", func() bool { return hasLine(s.Text(), "hi") })

	screen, second, err := s.Watch()
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	replay := vt.NewEmulator(60, 10)
	replay.Write(screen)
	if got, want := replay.String(), s.Text(); got != want {
		t.Fatalf("the screen sent to a new window redraws\n%q\nwant\n%q", got, want)
	}
	if c := replay.CellAt(0, lineIndex(s.Text(), "red")); c == nil || c.Style.Fg == nil {
		t.Errorf("the colour of \"red\" was not sent: %+v", c)
	}
	if n := s.Info().Watchers; n != 2 {
		t.Fatalf("Watchers = %d, want 2", n)
	}

	s.Write([]byte("echo again\r"))
	for _, w := range []*Watcher{first, second} {
		var got strings.Builder
		waitFor(t, "live output to both windows", func() bool {
			select {
			case b := <-w.C:
				got.Write(b)
			default:
			}
			return strings.Contains(got.String(), "again\r\n")
		})
	}
	first.Stop()
	if _, ok := <-first.C; ok {
		// drain what was queued before Stop
		for range first.C {
		}
	}
	if first.Reason() == "" {
		t.Error("a stopped watcher has no reason")
	}
}

func lineIndex(text, want string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == want {
			return i
		}
	}
	return -1
}

// TestExitCleansUp: the session ends with its shell, takes its jobs with it, and leaves the list;
// a watcher is told why.
func TestExitCleansUp(t *testing.T) {
	m := newTestManager(t, 1)
	s, err := m.Start(StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, w, err := s.Watch()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(StartOptions{}); !errors.Is(err, ErrTooMany) {
		t.Fatalf("a second session over the limit: %v, want ErrTooMany", err)
	}
	typeLine(t, s, "exit 3")
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end with its shell")
	}
	for range w.C {
	}
	if code := s.ExitCode(); code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	if r := w.Reason(); !strings.Contains(r, "exit code 3") {
		t.Errorf("watcher reason %q", r)
	}
	if m.Get(s.ID()) != nil || len(m.List()) != 0 {
		t.Error("an ended session is still listed")
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after the end: %v", err)
	}
	if _, _, err := s.Watch(); !errors.Is(err, ErrClosed) {
		t.Errorf("Watch after the end: %v", err)
	}
	if _, err := m.Start(StartOptions{}); err != nil {
		t.Fatalf("a new session once the old one ended: %v", err)
	}
}

// TestCloseKillsGroup: Close ends a shell that is running a program, and the program too.
func TestCloseKillsGroup(t *testing.T) {
	m := newTestManager(t, 2)
	s, err := m.Start(StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	typeLine(t, s, "sleep 300 & echo pid=$!")
	var pid int
	waitFor(t, "the sleep's pid", func() bool {
		for _, l := range strings.Split(s.Text(), "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "pid="); ok {
				_, err := fmt.Sscan(rest, &pid)
				return err == nil
			}
		}
		return false
	})
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	waitFor(t, "the sleep to be gone", func() bool { return syscall.Kill(pid, 0) != nil })
}

func TestFolderRefused(t *testing.T) {
	m := newTestManager(t, 2)
	for _, f := range []string{"relative/path", "/no/such/folder/here"} {
		if _, err := m.Start(StartOptions{Folder: f}); !problem.Is(err, problem.KindInvalid) {
			t.Errorf("Start in %q: %v, want an invalid folder", f, err)
		}
	}
}
