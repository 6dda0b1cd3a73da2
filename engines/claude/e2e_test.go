//go:build linux

package claude

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// The Claude Code these tests drive, as agent-clis.md §3 observed it.
const (
	claudePackage = "@anthropic-ai/claude-code"
	claudeVersion = "2.1.197"
)

// TestRealClaude drives the real claude from npm against the scripted model
// inside a loopback-only network namespace.
func TestRealClaude(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Claude Code; not in -short")
	}
	bin := enginetest.InstallNPM(t, claudePackage, claudeVersion, "claude")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	t.Run("AllowedRead", func(t *testing.T) { testAllowedRead(t, bin) })
	t.Run("DeniedWrite", func(t *testing.T) { testDeniedWrite(t, bin) })
	t.Run("AskUserQuestion", func(t *testing.T) { testAskUserQuestion(t, bin) })
	t.Run("Resume", func(t *testing.T) { testResume(t, bin) })
	t.Run("Stop", func(t *testing.T) { testStop(t, bin) })
	t.Run("ModelChoices", func(t *testing.T) { testModelChoices(t, bin) })
}

// e2e is one real claude pointed at a scripted model.
type e2e struct {
	t      *testing.T
	bin    string
	server *enginetest.Server
	home   string
	folder string
	host   *fakeHost
}

func newE2E(t *testing.T, bin string) *e2e {
	t.Helper()
	s := enginetest.NewServer(t)
	home := enginetest.ClaudeHome(t, s.URL)
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &e2e{t: t, bin: bin, server: s, home: home, folder: folder, host: newFakeHost()}
}

func (e *e2e) spec(prompt string) engines.Spec {
	tmp := e.t.TempDir()
	return engines.Spec{Folder: e.folder, Prompt: prompt, Home: e.home, MaxTurns: 10, Model: "claude-sonnet-4-5",
		Env: map[string]string{"TMPDIR": tmp}}
}

func (e *e2e) run(spec engines.Spec) (engines.Result, error) {
	e.t.Helper()
	start := time.Now()
	r, err := New(WithBinary(e.bin), WithLogger(testLogger(e.t)), WithRecord(enginetest.Recorder(e.t))).Start(context.Background(), spec, e.host)
	if err != nil {
		e.t.Fatal(err)
	}
	done := make(chan struct{})
	var res engines.Result
	go func() { res, err = r.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = r.Stop(context.Background())
		e.t.Fatal("claude did not finish within 2 minutes")
	}
	e.t.Logf("run took %v: %+v, %v", time.Since(start).Round(time.Millisecond), res, err)
	for _, ev := range e.host.EventsOf(engines.EventError) {
		e.t.Errorf("error event: %s", ev.Text)
	}
	return res, err
}

// lastToolResult is the tool result the model was last sent.
func (e *e2e) lastToolResult() enginetest.ToolResult {
	e.t.Helper()
	tr, ok := e.server.LastToolResult()
	if !ok {
		e.t.Fatal("the model never received a tool result")
	}
	return tr
}

func testAllowedRead(t *testing.T, bin string) {
	e := newE2E(t, bin)
	e.server.Script(
		enginetest.Shell("ls"),
		enginetest.Say("I see a.txt.").WhenLastUser("a.txt"),
	)
	res, err := e.run(e.spec("list the files"))
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if res.Summary != "I see a.txt." || res.SessionID == "" {
		t.Errorf("got %+v", res)
	}
	if tr := e.lastToolResult(); !strings.Contains(tr.Content, "a.txt") || tr.IsError {
		t.Errorf("the model got %+v, want the listing", tr)
	}
	calls := e.host.Calls()
	if len(calls) != 1 || calls[0].Kind != "shell" || calls[0].Command != "ls" || calls[0].Cwd != e.folder {
		t.Errorf("Permit got %+v, want one shell call running ls (every call goes to the judge)", calls)
	}
	kinds := map[engines.EventKind]int{}
	for _, ev := range e.host.Events() {
		kinds[ev.Kind]++
	}
	for _, k := range []engines.EventKind{engines.EventStarted, engines.EventToolStart, engines.EventToolEnd, engines.EventMessage, engines.EventUsage} {
		if kinds[k] == 0 {
			t.Errorf("no %s event in %v", k, kinds)
		}
	}
	if kinds[engines.EventError] != 0 {
		t.Errorf("error events: %+v", e.host.EventsOf(engines.EventError))
	}
}

func testDeniedWrite(t *testing.T, bin string) {
	e := newE2E(t, bin)
	const reason = "Writing files is off for this run; say what you would write instead."
	e.host.Permits["Write"] = engines.Permission{Reason: reason}
	target := filepath.Join(e.folder, "x.txt")
	e.server.Script(
		enginetest.ToolCall("Write", map[string]any{"file_path": target, "content": "hi\n"}),
		enginetest.Say("Understood, not writing.").WhenLastUser(reason),
	)
	res, err := e.run(e.spec("write x.txt"))
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if tr := e.lastToolResult(); !strings.Contains(tr.Content, reason) || !tr.IsError {
		t.Errorf("the model got %+v, want an error carrying the reason", tr)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("x.txt was written although Permit refused")
	}
	if res.Summary != "Understood, not writing." {
		t.Errorf("got %+v", res)
	}
	calls := e.host.Calls()
	if len(calls) != 1 || calls[0].Kind != "edit" || len(calls[0].Paths) != 1 || calls[0].Paths[0] != target {
		t.Errorf("Permit got %+v", calls)
	}
}

func testAskUserQuestion(t *testing.T, bin string) {
	e := newE2E(t, bin)
	e.host.Answers["Which color should the button be?"] = engines.Answer{Option: 1, Text: "Blue"}
	e.server.Script(
		enginetest.ToolCall("AskUserQuestion", map[string]any{"questions": []any{map[string]any{
			"question": "Which color should the button be?", "header": "Color", "multiSelect": false,
			"options": []any{
				map[string]any{"label": "Red", "description": "Warm"},
				map[string]any{"label": "Blue", "description": "Calm"},
			},
		}}}),
		enginetest.Say("Blue it is.").WhenLastUser("Blue"),
	)
	res, err := e.run(e.spec("ask me about the button"))
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	qs := e.host.Questions()
	if len(qs) != 1 || qs[0].Text != "Which color should the button be?" || len(qs[0].Options) != 2 {
		t.Fatalf("Ask got %+v", qs)
	}
	tr := e.lastToolResult()
	t.Logf("AskUserQuestion result the model got: %q (error %v)", tr.Content, tr.IsError)
	if !strings.Contains(tr.Content, "Blue") || tr.IsError {
		t.Errorf("the model got %+v, want the answer Blue", tr)
	}
	if res.Summary != "Blue it is." {
		t.Errorf("got %+v", res)
	}
}

func testResume(t *testing.T, bin string) {
	e := newE2E(t, bin)
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
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	if second.Summary != "The word was PELICAN." || second.Gone {
		t.Errorf("second run got %+v; the model did not see the first run's messages", second)
	}

	spec = e.spec("hello again")
	spec.Resume = "0b0b0b0b-1111-2222-3333-444444444444"
	gone, err := e.run(spec)
	if err != nil || !gone.Gone {
		t.Errorf("resuming a session claude does not have: got %+v, %v; want Gone and no error", gone, err)
	}
}

// mentions reports whether any message of r holds text.
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

func testStop(t *testing.T, bin string) {
	e := newE2E(t, bin)
	pidFile := filepath.Join(e.folder, "shell.pid")
	e.server.Script(
		enginetest.Shell("echo $$ > "+pidFile+"; sleep 3017"),
		enginetest.Say("stopped").Forever(),
	)
	r, err := New(WithBinary(e.bin), WithLogger(testLogger(t))).Start(context.Background(), e.spec("wait a while"), e.host)
	if err != nil {
		t.Fatal(err)
	}
	shell := enginetest.ReadPID(t, pidFile)
	claudePID := r.(*run).proc.Pid()
	if !enginetest.Alive(shell) || !enginetest.Alive(claudePID) {
		t.Fatal("nothing to stop")
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("Stop took %v", time.Since(start).Round(time.Millisecond))
	for _, ev := range e.host.Events() {
		t.Logf("event %s %s %s %.80q", ev.Kind, ev.Tool, ev.Session, ev.Text+ev.Output)
	}
	if _, err := r.Wait(); err != engines.ErrStopped {
		t.Errorf("Wait: got %v, want ErrStopped", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for (enginetest.Alive(shell) || enginetest.Alive(claudePID) || len(processesWith("sleep 3017")) > 0) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if enginetest.Alive(shell) || enginetest.Alive(claudePID) {
		t.Errorf("still running after Stop: claude %d %v, its shell %d %v", claudePID, enginetest.Alive(claudePID), shell, enginetest.Alive(shell))
	}
	if left := processesWith("sleep 3017"); len(left) > 0 {
		t.Errorf("the tool's command is still running: pids %v", left)
	}
}

// processesWith lists the live processes whose command line holds s.
func processesWith(s string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + ent.Name() + "/cmdline")
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) && enginetest.Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}
