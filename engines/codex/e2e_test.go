//go:build linux

package codex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// The Codex these tests drive, as agent-clis.md §4 observed it.
const (
	codexPackage = "@openai/codex"
	codexVersion = "0.171.0"
	codexModel   = "gpt-5.5" // from Codex's bundled catalog: the full tool set
)

// TestRealCodex drives the real codex from npm against the scripted model
// inside a loopback-only network namespace.
func TestRealCodex(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Codex; not in -short")
	}
	bin := enginetest.InstallNPM(t, codexPackage, codexVersion, "codex")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	t.Run("AllowedCommand", func(t *testing.T) { testAllowedCommand(t, bin) })
	t.Run("DeclinedCommand", func(t *testing.T) { testDeclinedCommand(t, bin) })
	t.Run("Resume", func(t *testing.T) { testResume(t, bin) })
	t.Run("Stop", func(t *testing.T) { testStop(t, bin) })
	t.Run("SignedOut", func(t *testing.T) { testSignedOut(t, bin) })
	t.Run("FastTier", func(t *testing.T) { testFastTier(t, bin) })
	t.Run("DeleteSession", func(t *testing.T) { testDeleteSession(t, bin) })
}

// testDeleteSession deletes a thread a run made with thread/delete: its rollout file is gone, and
// deleting it again is no error.
func testDeleteSession(t *testing.T, bin string) {
	e := newE2E(t, bin)
	e.server.Script(enginetest.Say("Nothing to do."))
	res, err := e.run(e.spec("look"))
	if err != nil || res.SessionID == "" {
		t.Fatalf("run: %+v %v", res, err)
	}
	rollouts := func() []string {
		var found []string
		filepath.WalkDir(filepath.Join(e.codexHome, "sessions"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.Contains(d.Name(), res.SessionID) {
				found = append(found, p)
			}
			return nil
		})
		return found
	}
	if len(rollouts()) == 0 {
		t.Fatalf("no rollout of thread %s under %s", res.SessionID, e.codexHome)
	}
	d := New(WithBinary(bin), WithLogger(testLogger(t)))
	spec := e.spec("")
	d.environ = func() []string {
		env := append(os.Environ(), "HOME="+spec.Home)
		for k, v := range spec.Env {
			env = append(env, k+"="+v)
		}
		return env
	}
	if err := d.DeleteSession(context.Background(), res.SessionID, e.folder); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	if left := rollouts(); len(left) != 0 {
		t.Errorf("the thread's rollout is still there: %v", left)
	}
	if err := d.DeleteSession(context.Background(), res.SessionID, e.folder); err != nil {
		t.Errorf("deleting it again: %v", err)
	}
	if err := d.DeleteSession(context.Background(), "../../etc", e.folder); !errors.Is(err, engines.ErrNoSession) {
		t.Errorf("a path as the id: %v", err)
	}
}

// e2e is one real codex pointed at a scripted model.
type e2e struct {
	t         *testing.T
	bin       string
	server    *enginetest.Server
	codexHome string
	tmp       string
	folder    string
	host      *fakeHost
}

func newE2E(t *testing.T, bin string) *e2e {
	t.Helper()
	s := enginetest.NewServer(t)
	codexHome, tmp := enginetest.CodexHome(t, s.URL, codexModel)
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &e2e{t: t, bin: bin, server: s, codexHome: codexHome, tmp: tmp, folder: folder, host: newFakeHost()}
}

func (e *e2e) spec(prompt string) engines.Spec {
	// HOME a throwaway beside CODEX_HOME: Codex snapshots the login shell, and this computer's own
	// shell start-up files are not the test's.
	return engines.Spec{Folder: e.folder, Prompt: prompt, Home: filepath.Dir(e.codexHome), Env: map[string]string{
		"CODEX_HOME":                  e.codexHome,
		"TMPDIR":                      e.tmp,
		enginetest.CodexProviderKey:   "dummy",
		"RUST_LOG":                    "warn",
		"CODEX_DISABLE_UPDATE_NOTICE": "1",
	}}
}

func (e *e2e) start(spec engines.Spec) engines.Run {
	e.t.Helper()
	r, err := New(WithBinary(e.bin), WithLogger(testLogger(e.t)), WithRecord(enginetest.Recorder(e.t))).Start(context.Background(), spec, e.host)
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
		e.t.Fatal("codex did not finish within 2 minutes")
	}
	e.t.Logf("run took %v: %+v, %v", time.Since(start).Round(time.Millisecond), res, err)
	for _, ev := range e.host.Events() {
		e.t.Logf("event %s %s %s %.120q", ev.Kind, ev.Tool, ev.Session, ev.Text+ev.Output)
	}
	return res, err
}

func (e *e2e) noErrorEvents() {
	e.t.Helper()
	for _, ev := range e.host.EventsOf(engines.EventError) {
		e.t.Errorf("error event: %s", ev.Text)
	}
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

func testAllowedCommand(t *testing.T, bin string) {
	e := newE2E(t, bin)
	// touch is not among the commands Codex runs without asking.
	e.server.Script(
		enginetest.Shell("touch made.txt && ls"),
		enginetest.Say("I made made.txt."),
	)
	res, err := e.run(e.spec("make a file"))
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	e.noErrorEvents()
	if res.Summary != "I made made.txt." || res.SessionID == "" || res.Turns != 1 {
		t.Errorf("got %+v", res)
	}
	if _, err := os.Stat(filepath.Join(e.folder, "made.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	if tr := e.lastToolResult(); !strings.Contains(tr.Content, "a.txt") {
		t.Errorf("the model got %+v, want the listing", tr)
	}
	calls := e.host.Calls()
	if len(calls) != 1 || calls[0].Kind != "shell" || calls[0].Command != "touch made.txt && ls" || calls[0].Cwd != e.folder {
		t.Errorf("Permit got %+v, want one shell call", calls)
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
	for _, ev := range e.host.EventsOf(engines.EventToolEnd) {
		if ev.Failed || !strings.Contains(ev.Output, "a.txt") {
			t.Errorf("tool_end %+v, want the listing", ev)
		}
	}
}

func testDeclinedCommand(t *testing.T, bin string) {
	e := newE2E(t, bin)
	const reason = "Deleting files is off for this run; say what you would delete instead."
	e.host.Permits["commandExecution"] = engines.Permission{Reason: reason}
	e.server.Script(
		enginetest.Shell("rm a.txt"),
		enginetest.Say("Understood, not deleting.").When(enginetest.Match{Func: func(r *enginetest.Request) bool {
			return mentions(r, reason)
		}}),
	)
	res, err := e.run(e.spec("delete a.txt"))
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	e.noErrorEvents()
	if _, err := os.Stat(filepath.Join(e.folder, "a.txt")); err != nil {
		t.Errorf("a.txt is gone although Permit refused")
	}
	if res.Summary != "Understood, not deleting." {
		t.Errorf("got %+v; the model did not read the reason", res)
	}
	// Codex's decline carries no reason: the declined call's own result is
	// Codex's "rejected by user", and the reason follows it as the person's
	// words (turn/steer) in the same request.
	last := lastRequest(e.server)
	results := toolResultsIn(last)
	if len(results) != 1 || !strings.Contains(results[0].Text, "rejected") {
		t.Errorf("the model got tool results %+v, want the call rejected", results)
	}
	if got := last.LastUserText(); !strings.Contains(got, reason) || !strings.Contains(got, "rm a.txt") {
		t.Errorf("the model's last user text is %q, want the refusal's reason", got)
	}
	calls := e.host.Calls()
	if len(calls) != 1 || calls[0].Kind != "shell" || calls[0].Command != "rm a.txt" {
		t.Errorf("Permit got %+v", calls)
	}
	ends := e.host.EventsOf(engines.EventToolEnd)
	if len(ends) != 1 || !ends[0].Failed {
		t.Errorf("tool_end events %+v, want one failed", ends)
	}
}

func lastRequest(s *enginetest.Server) *enginetest.Request {
	reqs := s.Requests()
	if len(reqs) == 0 {
		return &enginetest.Request{}
	}
	return &reqs[len(reqs)-1]
}

// toolResultsIn lists every tool result in r's conversation.
func toolResultsIn(r *enginetest.Request) []enginetest.Block {
	var out []enginetest.Block
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out
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

func testResume(t *testing.T, bin string) {
	e := newE2E(t, bin)
	e.server.Script(
		enginetest.Say("Noted: PELICAN."),
		enginetest.Say("The word was PELICAN.").When(enginetest.Match{Func: func(r *enginetest.Request) bool {
			return strings.Contains(r.LastUserText(), "what was the word") && mentions(r, "remember the word PELICAN") && mentions(r, "Noted: PELICAN.")
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
	if second.Summary != "The word was PELICAN." || second.Gone || second.SessionID != first.SessionID {
		t.Errorf("second run got %+v; the model did not see the first run's messages", second)
	}

	spec = e.spec("hello again")
	spec.Resume = "019a0b0b-1111-7222-8333-444444444444"
	gone, err := e.run(spec)
	if err != nil || !gone.Gone {
		t.Errorf("resuming a thread codex does not have: got %+v, %v; want Gone and no error", gone, err)
	}
	e.noErrorEvents()
}

func testStop(t *testing.T, bin string) {
	e := newE2E(t, bin)
	e.server.Script(
		enginetest.Shell("sleep 3017"),
		enginetest.Say("stopped").Forever(),
	)
	r := e.start(e.spec("wait a while"))
	// The command runs in Codex's sandbox, in a process namespace of its own:
	// its $$ means nothing here, so it is found by its command line.
	// The sandbox's wrappers hold the words in their command lines for a moment before the
	// command itself starts: wait for the command, seen once, not for the words.
	deadline := time.Now().Add(30 * time.Second)
	sleeps := processesRunning("sleep", "3017")
	for len(sleeps) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		sleeps = processesRunning("sleep", "3017")
	}
	codexPID := r.(*run).proc.Pid()
	if len(sleeps) == 0 || !enginetest.Alive(codexPID) {
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
	deadline = time.Now().Add(5 * time.Second)
	for (enginetest.Alive(codexPID) || len(processesWith("sleep 3017")) > 0) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if enginetest.Alive(codexPID) {
		t.Errorf("codex %d still running after Stop", codexPID)
	}
	if left := processesWith("sleep 3017"); len(left) > 0 {
		t.Errorf("the tool's command is still running after Stop: pids %v (were %v)", left, sleeps)
	}
}

func testSignedOut(t *testing.T, bin string) {
	e := newE2E(t, bin)
	// A Codex home without a provider of its own and without a sign-in.
	if err := os.Remove(filepath.Join(e.codexHome, "config.toml")); err != nil {
		t.Fatal(err)
	}
	_, err := e.run(e.spec("hello"))
	if err == nil || !errors.Is(err, engines.ErrSignedOut) || !strings.Contains(err.Error(), signInHint) {
		t.Errorf("got %v, want ErrSignedOut saying %q", err, signInHint)
	}
	if n := len(e.server.Requests()); n != 0 {
		t.Errorf("the model got %d requests from a Codex that is not signed in", n)
	}
}

// processesRunning lists the live processes running exactly argv.
func processesRunning(argv ...string) []int {
	var out []int
	want := strings.Join(argv, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + ent.Name() + "/cmdline")
		if err == nil && string(b) == want && enginetest.Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
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
