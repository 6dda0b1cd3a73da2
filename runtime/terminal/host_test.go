//go:build !windows

package terminal

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostTestVar makes the test binary a terminal host, as `ensemble terminal-host` is: the hosts
// these tests start are real processes, running this package's HostMain.
const hostTestVar = "ENSEMBLE_TERMINAL_HOST_TEST"

// runtimeTestVar makes the test binary a runtime with one terminal in a host, under the data
// folder it names, for a test to kill.
const runtimeTestVar = "ENSEMBLE_TERMINAL_RUNTIME_TEST"

func TestMain(m *testing.M) {
	if os.Getenv(hostTestVar) == "1" {
		os.Exit(HostMain(os.Stdin, os.Stdout))
	}
	if data := os.Getenv(runtimeTestVar); data != "" {
		os.Exit(runtimeMain(data))
	}
	os.Exit(m.Run())
}

// runtimeMain starts a terminal that runs a command for a while, says its id on stdout, and waits
// to be killed.
func runtimeMain(data string) int {
	exe, _ := os.Executable()
	m := New(Options{Shell: "/bin/sh", Home: data, Host: &HostOptions{Program: exe, DataDir: data}})
	env := append([]string{runtimeTestVar + "="}, hostEnv...)
	s, err := m.Start(StartOptions{Env: env, Command: "read line; echo survived $line; sleep 600"})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println(s.ID())
	select {}
}

// hostEnv goes into a session's environment, which is its host's too.
var hostEnv = []string{hostTestVar + "=1"}

// newHostManager is a Manager whose sessions run in hosts with their files under data.
func newHostManager(t *testing.T, data string) *Manager {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{Max: 4, Shell: sh, Home: t.TempDir(), Host: &HostOptions{Program: exe, DataDir: data}})
}

func readHostInfo(t *testing.T, data, id string) hostInfo {
	t.Helper()
	b, err := os.ReadFile(infoPath(filepath.Join(data, "terminals"), id))
	if err != nil {
		t.Fatal(err)
	}
	var in hostInfo
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

func waitDone(t *testing.T, s *Session, what string) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func waitGone(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		waitFor(t, p+" removed", func() bool { _, err := os.Stat(p); return os.IsNotExist(err) })
	}
}

// TestHostReattach: a runtime that dies leaves its node's shell running in the host; the next one
// reattaches, sees the screen as it was, and types on. A command started before the death has
// finished by then.
func TestTerminalHostReattach(t *testing.T) {
	data := t.TempDir()
	first := newHostManager(t, data)
	s, err := first.Start(StartOptions{Cols: 60, Rows: 10, Env: hostEnv, Node: "nd1"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(data, "terminals")
	for path, want := range map[string]os.FileMode{dir: 0o700, infoPath(dir, s.ID()): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v, %v; want mode %v", path, fi, err, want)
		}
	}
	in := readHostInfo(t, data, s.ID())
	if in.ID != s.ID() || in.Node != "nd1" || in.PID == os.Getpid() || in.Shell == 0 || len(in.Token) != 64 {
		t.Fatalf("the host's json: %+v", in)
	}
	typeLine(t, s, "echo hi")
	waitFor(t, "hi on the screen", func() bool { return hasLine(s.Text(), "hi") })
	if _, err := s.Write([]byte("sleep 2; echo late\r")); err != nil {
		t.Fatal(err)
	}

	// The runtime dies: nothing is closed, its connection is simply abandoned.
	second := newHostManager(t, data)
	t.Cleanup(second.Close)
	got := second.Reattach()
	if len(got) != 1 || got[0].ID() != s.ID() || got[0].Node() != "nd1" || second.Get(s.ID()) != got[0] {
		t.Fatalf("Reattach() = %v, want the session %s", got, s.ID())
	}
	r := got[0]
	if in := r.Info(); in.Cols != 60 || in.Rows != 10 || in.Folder != s.Info().Folder {
		t.Fatalf("the reattached session's Info() = %+v", in)
	}
	waitFor(t, "hi on the rebuilt screen", func() bool { return hasLine(r.Text(), "hi") })
	waitDone(t, s, "the abandoned session to let go") // the host took the new runtime instead
	if first.Get(s.ID()) != nil {
		t.Error("the abandoned Manager still lists the session")
	}
	waitFor(t, "the command started before the death, finished", func() bool { return hasLine(r.Text(), "late") })
	typeLine(t, r, "echo again")
	waitFor(t, "again on the screen", func() bool { return hasLine(r.Text(), "again") })

	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the shell to be gone", func() bool { return syscall.Kill(in.Shell, 0) != nil })
	waitGone(t, infoPath(dir, s.ID()), sockPath(dir, s.ID()))
	if again := newHostManager(t, data).Reattach(); len(again) != 0 {
		t.Fatalf("a closed session was reattached: %v", again)
	}
}

// TestHostKeepsExitCode: a shell that exits while no runtime is attached leaves its exit code for
// the next one; once that one has seen it, the host goes.
func TestTerminalHostKeepsExitCode(t *testing.T) {
	data := t.TempDir()
	folder := t.TempDir()
	first := newHostManager(t, data)
	s, err := first.Start(StartOptions{Folder: folder, Env: hostEnv, Command: "while [ ! -e go ]; do sleep 0.05; done; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	in := readHostInfo(t, data, s.ID())
	first.Detach() // the runtime stops, as Runtime.Close does
	waitDone(t, s, "the detached session")
	if err := os.WriteFile(filepath.Join(folder, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the shell to exit", func() bool { return syscall.Kill(in.Shell, 0) != nil })

	second := newHostManager(t, data)
	t.Cleanup(second.Close)
	got := second.Reattach()
	if len(got) != 1 {
		t.Fatalf("Reattach() = %v, want the ended session", got)
	}
	waitDone(t, got[0], "the reattached session to end")
	if code := got[0].ExitCode(); code != 3 {
		t.Fatalf("exit code %d, want 3", code)
	}
	dir := filepath.Join(data, "terminals")
	waitGone(t, infoPath(dir, s.ID()), sockPath(dir, s.ID()))
	waitFor(t, "the host to exit", func() bool { return syscall.Kill(in.PID, 0) != nil })
}

// TestHostRefusesWrongToken: only the token in the session's json lets a client in; the session
// goes on.
func TestTerminalHostRefusesWrongToken(t *testing.T) {
	data := t.TempDir()
	m := newHostManager(t, data)
	t.Cleanup(m.Close)
	s, err := m.Start(StartOptions{Env: hostEnv})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(data, "terminals")
	for _, token := range []string{"", "wrong", strings.Repeat("0", 64)} {
		p, _, _, replay, err := dialHost(dir, s.ID(), token)
		if err == nil || !strings.Contains(err.Error(), "refused") {
			if p != nil {
				p.detach()
			}
			t.Fatalf("token %q: err %v, replay %q; want it refused", token, err, replay)
		}
	}
	typeLine(t, s, "echo still")
	waitFor(t, "the session going on", func() bool { return hasLine(s.Text(), "still") })
}

// TestReattachRemovesDeadHosts: a host that died (its socket answers nobody) leaves files that the
// next Reattach removes.
func TestTerminalReattachRemovesDeadHosts(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "terminals")
	if err := makeHostDir(dir); err != nil {
		t.Fatal(err)
	}
	const id = "ts0123456789abcdef"
	if err := writeInfo(dir, hostInfo{ID: id, Token: "x", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if got := newHostManager(t, data).Reattach(); len(got) != 0 {
		t.Fatalf("Reattach() = %v, want none", got)
	}
	waitGone(t, infoPath(dir, id))
}

// TestTerminalHostOutlivesKilledRuntime: a runtime killed outright, with its whole process group,
// leaves its terminal's host and shell running; the next one attaches and types on.
func TestTerminalHostOutlivesKilledRuntime(t *testing.T) {
	data := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rt := exec.Command(exe)
	rt.Env = append(os.Environ(), runtimeTestVar+"="+data)
	rt.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := rt.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	id := strings.TrimSpace(line)
	if !idRe.MatchString(id) {
		syscall.Kill(-rt.Process.Pid, syscall.SIGKILL)
		rt.Wait()
		t.Fatalf("the runtime said %q", line)
	}
	syscall.Kill(-rt.Process.Pid, syscall.SIGKILL)
	rt.Wait()

	m := newHostManager(t, data)
	t.Cleanup(m.Close)
	got := m.Reattach()
	if len(got) != 1 || got[0].ID() != id {
		t.Fatalf("Reattach() = %v, want %s", got, id)
	}
	if _, err := got[0].Write([]byte("yes\r")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the shell to answer", func() bool { return hasLine(got[0].Text(), "survived yes") })
}
