//go:build linux

package acp

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// The opencode these tests drive, as agent-clis.md §5 observed it.
const (
	opencodePackage = "opencode-ai"
	opencodeVersion = "1.18.33"
)

// TestRealOpencode drives the real `opencode acp` from npm against the scripted model inside a
// loopback-only network namespace.
func TestRealOpencode(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real opencode; not in -short")
	}
	bin := enginetest.InstallNPM(t, opencodePackage, opencodeVersion, "opencode")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	t.Run("AllowedAndRefused", func(t *testing.T) { testOpencodeAllowedRefused(t, bin) })
	t.Run("Resume", func(t *testing.T) { testOpencodeResume(t, bin) })
	t.Run("Stop", func(t *testing.T) { testOpencodeStop(t, bin) })
	t.Run("EnsemblesSandbox", func(t *testing.T) { testOpencodeSandboxed(t, bin) })
	t.Run("DeleteSession", func(t *testing.T) { testDeleteSession(t, newOpencodeE2E(t, bin), nil) })
}

type e2e struct {
	t       *testing.T
	profile Profile
	model   string // Spec.Model
	bin     string
	server  *enginetest.Server
	home    string
	env     map[string]string
	folder  string
	host    *fakeHost
}

func newOpencodeE2E(t *testing.T, bin string) *e2e {
	s := enginetest.NewServer(t)
	home, env := enginetest.OpencodeEnv(t, s.URL)
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ := ProfileNamed("opencode")
	return &e2e{t: t, profile: p, bin: bin, server: s, home: home, env: env, folder: folder, host: &fakeHost{}}
}

func (e *e2e) spec(prompt string) engines.Spec {
	return engines.Spec{Folder: e.folder, Prompt: prompt, Home: e.home, Env: e.env, Model: e.model}
}

func (e *e2e) start(spec engines.Spec) engines.Run {
	e.t.Helper()
	level := slog.LevelInfo
	if os.Getenv("ENSEMBLE_E2E_DEBUG") != "" { // the protocol and the agent's standard error too
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(testWriter{e.t}, &slog.HandlerOptions{Level: level}))
	r, err := New(e.profile, WithBinary(e.bin), WithLogger(log), WithRecord(enginetest.Recorder(e.t))).Start(context.Background(), spec, e.host)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *e2e) run(spec engines.Spec) (engines.Result, error) {
	e.t.Helper()
	start := time.Now()
	r := e.start(spec)
	done := make(chan struct{})
	var res engines.Result
	var err error
	go func() { res, err = r.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = r.Stop(context.Background())
		e.t.Fatalf("%s did not finish within 2 minutes", e.profile.Title)
	}
	e.t.Logf("run took %v: %+v, %v", time.Since(start).Round(time.Millisecond), res, err)
	for _, ev := range e.host.of(engines.EventError) {
		e.t.Errorf("error event: %s", ev.Text)
	}
	return res, err
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testOpencodeAllowedRefused(t *testing.T, bin string) {
	e := newOpencodeE2E(t, bin)
	const reason = "Deleting files is off for this run."
	e.host.allow = func(c engines.ToolCall) engines.Permission {
		if strings.Contains(c.Command, "rm ") {
			return engines.Permission{Reason: reason}
		}
		return engines.Permission{Allow: true}
	}
	e.server.Script(
		enginetest.Shell("ls"),
		enginetest.Shell("rm a.txt").WhenLastUser("a.txt"),
		enginetest.Say("Understood, a.txt stays.").WhenLastUser(reason),
	)
	res, err := e.run(e.spec("list the files, then delete a.txt"))
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.folder, "a.txt")); err != nil {
		t.Errorf("a.txt is gone although Permit refused: %v", err)
	}
	if res.Summary != "Understood, a.txt stays." || res.SessionID == "" || res.Turns != 2 {
		t.Errorf("got %+v", res)
	}
	calls := e.host.calls
	if len(calls) != 2 || calls[0].Kind != "shell" || calls[0].Command != "ls" || calls[1].Command != "rm a.txt" {
		t.Errorf("Permit got %+v", calls)
	}
	var listed bool
	for _, ev := range e.host.of(engines.EventToolEnd) {
		if strings.Contains(ev.Output, "a.txt") && !ev.Failed {
			listed = true
		}
	}
	if !listed {
		t.Errorf("no tool_end with the listing: %+v", e.host.of(engines.EventToolEnd))
	}
	for _, k := range []engines.EventKind{engines.EventStarted, engines.EventToolStart, engines.EventMessage} {
		if len(e.host.of(k)) == 0 {
			t.Errorf("no %s event", k)
		}
	}
}

// testOpencodeSandboxed runs OpenCode, which has no sandbox of its own, inside Ensemble's: the
// commands the judge lets through (as Run unattended lets inline interpreter code through) can
// change the work folder but not a folder in the home or a start-up file, and cannot read a key.
func testOpencodeSandboxed(t *testing.T, bin string) {
	e := newOpencodeE2E(t, bin)
	c := enginetest.NewCanaries(t, e.home)
	e.server.Script(
		enginetest.Shell(c.DeleteFolder),
		enginetest.Shell(c.WriteBashrc),
		enginetest.Shell("cat "+c.Key),
		enginetest.Shell("echo made > made.txt"),
		enginetest.Say("done"),
	)
	spec := e.spec("clean up")
	spec.Sandbox = engines.Sandbox{On: true, Write: []string{e.folder, e.env["TMPDIR"]}, DenyRead: []string{filepath.Dir(c.Key)}}
	res, err := e.run(spec)
	if err != nil || res.Summary != "done" {
		t.Fatalf("got %+v, %v", res, err)
	}
	c.Check(t, e.server)
	if b, err := os.ReadFile(filepath.Join(e.folder, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("the work folder's file: %q, %v", b, err)
	}
	started := e.host.of(engines.EventStarted)
	if len(started) == 0 || started[0].Enforcement == nil || started[0].Enforcement.By != "ensemble" || !started[0].Enforcement.Whole {
		t.Errorf("the started event does not say Ensemble's sandbox holds the whole agent: %+v", started)
	}
}

func testOpencodeResume(t *testing.T, bin string) {
	e := newOpencodeE2E(t, bin)
	e.server.Script(
		enginetest.Say("Noted: PELICAN."),
		enginetest.Say("The word was PELICAN.").When(enginetest.Match{Func: func(r *enginetest.Request) bool {
			return strings.Contains(r.LastUserText(), "what was the word") && mentions(r, "remember the word PELICAN")
		}}),
	)
	first, err := e.run(e.spec("remember the word PELICAN"))
	if err != nil || first.SessionID == "" {
		t.Fatalf("first run: %+v, %v", first, err)
	}
	spec := e.spec("what was the word?")
	spec.Resume = first.SessionID
	second, err := e.run(spec)
	if err != nil || second.Gone || second.Summary != "The word was PELICAN." || second.SessionID != first.SessionID {
		t.Errorf("second run got %+v, %v; the model did not see the first run's messages", second, err)
	}
	spec = e.spec("hello again")
	spec.Resume = "ses_0000000000000000000000000"
	gone, err := e.run(spec)
	if err != nil || !gone.Gone {
		t.Errorf("resuming a session opencode does not have: got %+v, %v; want Gone", gone, err)
	}
}

func mentions(r *enginetest.Request, text string) bool {
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if strings.Contains(b.Text, text) {
				return true
			}
		}
	}
	return false
}

func testOpencodeStop(t *testing.T, bin string) {
	e := newOpencodeE2E(t, bin)
	pidFile := filepath.Join(e.folder, "shell.pid")
	e.server.Script(
		enginetest.Shell("echo $$ > "+pidFile+"; sleep 3017"),
		enginetest.Say("stopped").Forever(),
	)
	r := e.start(e.spec("wait a while"))
	var shell int
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			if shell, err = strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				break
			}
		}
	}
	agent := r.(*run).proc.Pid()
	if shell == 0 || !alive(agent) {
		t.Fatal("nothing to stop")
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("Stop took %v", time.Since(start).Round(time.Millisecond))
	if _, err := r.Wait(); err != engines.ErrStopped {
		t.Errorf("Wait: got %v, want ErrStopped", err)
	}
	for deadline := time.Now().Add(5 * time.Second); (alive(shell) || alive(agent)) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(shell) || alive(agent) {
		t.Errorf("still running after Stop: opencode %d %v, its shell %d %v", agent, alive(agent), shell, alive(shell))
	}
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
