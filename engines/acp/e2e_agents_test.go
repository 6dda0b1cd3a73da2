//go:build linux

package acp

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

// realAgent is one real ACP agent CLI that [runRealAgent] drives through the same checks: an
// allowed command runs and its output reaches the model; a refused one does not run and the
// reason reaches the model; Spec.Resume continues the session (or reports Gone); Stop ends the
// agent's whole process group, its shell included.
type realAgent struct {
	profile Profile
	// env makes the agent's home and environment for the scripted model at url.
	env   func(t testing.TB, url string) (home string, env map[string]string)
	model string // Spec.Model, "" for the agent's own
	// loads: the agent loads sessions (session/load), so a resumed run continues the session;
	// otherwise it must report Result.Gone.
	loads bool
	// unknownSession is a session id in the agent's own format that it does not have.
	unknownSession string
	server         []enginetest.Option // for the scripted model
	// beforeResume, when set, runs between the first run and the resumed one.
	beforeResume func(t *testing.T, e *e2e)
	// unsandboxed, when set, says why the agent is not run with the sandbox on.
	unsandboxed string
}

func (a realAgent) newE2E(t *testing.T, bin string) *e2e {
	s := enginetest.NewServer(t, a.server...)
	home, env := a.env(t, s.URL)
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &e2e{t: t, profile: a.profile, model: a.model, bin: bin, server: s, home: home, env: env, folder: folder, host: &fakeHost{}}
}

// runRealAgent runs the checks on the agent installed at bin; call it inside the loopback-only
// namespace.
func runRealAgent(t *testing.T, a realAgent, bin string) {
	timed := func(name string, f func(*testing.T)) {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			defer func() { t.Logf("%s %s took %v", a.profile.Name, name, time.Since(start).Round(time.Millisecond)) }()
			f(t)
		})
	}
	timed("AllowedAndRefused", func(t *testing.T) { testAllowedRefused(t, a.newE2E(t, bin)) })
	timed("Resume", func(t *testing.T) { testResume(t, a, a.newE2E(t, bin)) })
	timed("Stop", func(t *testing.T) { testStop(t, a.newE2E(t, bin)) })
	if a.unsandboxed == "" {
		timed("Sandboxed", func(t *testing.T) { testSandboxed(t, a.newE2E(t, bin)) })
	}
	if a.profile.Delete != nil && a.loads {
		timed("DeleteSession", func(t *testing.T) { testDeleteSession(t, a.newE2E(t, bin), a.beforeResume) })
	}
}

// testDeleteSession deletes the session a run made with the agent's own command: resuming it then
// reports Gone, and deleting it again is no error. beforeResume, when set, runs before the delete.
func testDeleteSession(t *testing.T, e *e2e, beforeResume func(*testing.T, *e2e)) {
	e.server.Script(enginetest.Say("Nothing to do."))
	first, err := e.run(e.spec("look"))
	if err != nil || first.SessionID == "" {
		t.Fatalf("first run: %+v, %v", first, err)
	}
	if beforeResume != nil {
		beforeResume(t, e)
	}
	if key := e.env["GEMINI_API_KEY"]; key != "" {
		// A run's environment goes without GEMINI_API_KEY (spec 003 §6): Gemini CLI reads the
		// test's key from its own ~/.gemini/.env, as a person's sign-in from its settings.
		if err := os.WriteFile(filepath.Join(e.home, ".gemini", ".env"), []byte("GEMINI_API_KEY="+key+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := New(e.profile, WithBinary(e.bin))
	d.environ = func() []string {
		env := append(os.Environ(), "HOME="+e.home)
		for k, v := range e.env {
			env = append(env, k+"="+v)
		}
		return env
	}
	if err := d.DeleteSession(context.Background(), first.SessionID, e.folder); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	if err := d.DeleteSession(context.Background(), first.SessionID, e.folder); err != nil {
		t.Errorf("deleting it again: %v", err)
	}
	spec := e.spec("carry on")
	spec.Resume = first.SessionID
	again, err := e.run(spec)
	if err != nil || !again.Gone {
		t.Errorf("resuming the deleted session: got %+v, %v; want Gone", again, err)
	}
}

// testSandboxed runs the agent with the sandbox on, whichever confines it here (its own, or
// Ensemble's around the whole agent): what the judge lets through cannot change a folder in the
// home or a start-up file, or read a key, and the work folder stays the agent's to change.
func testSandboxed(t *testing.T, e *e2e) {
	c := enginetest.NewCanaries(t, e.home)
	e.server.Script(
		enginetest.Shell(c.DeleteFolder),
		enginetest.Shell(c.WriteBashrc),
		enginetest.Shell("cat "+c.Key),
		enginetest.Shell("echo made > made.txt"),
		enginetest.Say("done"),
	)
	spec := e.spec("clean up")
	write := []string{e.folder}
	if tmp := e.env["TMPDIR"]; tmp != "" {
		write = append(write, tmp)
	}
	spec.Sandbox = engines.Sandbox{On: true, Write: write, DenyRead: []string{filepath.Dir(c.Key)}}
	if _, err := e.run(spec); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	c.Check(t, e.server)
	if b, err := os.ReadFile(filepath.Join(e.folder, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("the work folder's file: %q, %v", b, err)
	}
	started := e.host.of(engines.EventStarted)
	if len(started) == 0 || started[0].Enforcement == nil || started[0].Enforcement.By == "" {
		t.Errorf("the started event names no sandbox: %+v", started)
	} else {
		t.Logf("%s is confined by %q: %s", e.profile.Title, started[0].Enforcement.By, started[0].Enforcement.Note)
	}
}

func testAllowedRefused(t *testing.T, e *e2e) {
	const (
		allowed = "ls && touch listed.txt"
		reason  = "Deleting files is off for this run."
		final   = "Understood, a.txt stays."
	)
	e.host.allow = func(c engines.ToolCall) engines.Permission {
		if strings.Contains(c.Command, "rm ") {
			return engines.Permission{Reason: reason}
		}
		return engines.Permission{Allow: true}
	}
	e.server.Script(
		enginetest.Shell(allowed),
		enginetest.Shell("rm a.txt").WhenLastUser("a.txt"),
		// An agent that hands the refusal back to the model within the turn (a failed tool
		// result, without Ensemble's reason) gets this; the reason comes as the next prompt.
		enginetest.Say("I will wait for the person.").When(enginetest.Match{Func: func(r *enginetest.Request) bool {
			_, ok := r.LastToolResult()
			return ok && !strings.Contains(r.LastUserText(), reason)
		}}),
		enginetest.Say(final).WhenLastUser(reason),
	)
	res, err := e.run(e.spec("list the files, then delete a.txt"))
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.folder, "listed.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.folder, "a.txt")); err != nil {
		t.Errorf("a.txt is gone although Permit refused: %v", err)
	}
	if res.Summary != final || res.SessionID == "" || res.Turns != 2 {
		t.Errorf("got %+v; want the summary %q after 2 turns", res, final)
	}
	var sawAllowed, sawRefused bool
	for _, c := range e.host.calls {
		switch {
		case c.Kind == "shell" && strings.Contains(c.Command, "touch listed.txt"):
			sawAllowed = true
		case c.Kind == "shell" && strings.Contains(c.Command, "rm a.txt"):
			sawRefused = true
		default:
			t.Errorf("Permit got an unexpected call %+v", c)
		}
	}
	if !sawAllowed || !sawRefused {
		t.Errorf("Permit got %+v; want the allowed and the refused command", e.host.calls)
	}
	// The model saw the listing as the allowed command's result, and the refusal's reason.
	var listing, told bool
	for _, r := range e.server.Requests() {
		for _, m := range r.Messages {
			for _, b := range m.Blocks {
				if b.Type == "tool_result" && strings.Contains(b.Text, "a.txt") && !strings.Contains(b.Text, reason) {
					listing = true
				}
			}
		}
		if mentions(&r, reason) {
			told = true
		}
	}
	if !listing {
		t.Error("no model request carried the allowed command's output (a.txt) as a tool result")
	}
	if !told {
		t.Error("no model request carried the refusal's reason")
	}
	var ended bool
	for _, ev := range e.host.of(engines.EventToolEnd) {
		t.Logf("tool_end %s failed=%v output=%q", ev.Tool, ev.Failed, ev.Output)
		ended = true
	}
	if !ended {
		t.Error("no tool_end event")
	}
	for _, k := range []engines.EventKind{engines.EventStarted, engines.EventMessage} {
		if len(e.host.of(k)) == 0 {
			t.Errorf("no %s event", k)
		}
	}
}

func testResume(t *testing.T, a realAgent, e *e2e) {
	e.server.Script(
		enginetest.Say("Noted: PELICAN."),
		enginetest.Say("The word was PELICAN.").When(enginetest.Match{Func: func(r *enginetest.Request) bool {
			return strings.Contains(r.LastUserText(), "what was the word") && mentions(r, "remember the word PELICAN")
		}}),
	)
	first, err := e.run(e.spec("remember the word PELICAN"))
	if err != nil || first.SessionID == "" || first.Summary != "Noted: PELICAN." {
		t.Fatalf("first run: %+v, %v", first, err)
	}
	if a.beforeResume != nil {
		a.beforeResume(t, e)
	}
	spec := e.spec("what was the word?")
	spec.Resume = first.SessionID
	second, err := e.run(spec)
	if !a.loads {
		if err != nil || !second.Gone {
			t.Errorf("%s does not load sessions: got %+v, %v; want Gone", a.profile.Title, second, err)
		}
		return
	}
	if err != nil || second.Gone || second.Summary != "The word was PELICAN." || second.SessionID != first.SessionID {
		t.Errorf("second run got %+v, %v; the model did not see the first run's messages", second, err)
		_ = filepath.WalkDir(e.home, func(path string, d os.DirEntry, _ error) error {
			if d != nil && !d.IsDir() {
				t.Logf("in the agent's home: %s", path)
				if os.Getenv("ENSEMBLE_E2E_DEBUG") != "" && strings.Contains(path, "chats") {
					b, _ := os.ReadFile(path)
					t.Logf("%s", b)
				}
			}
			return nil
		})
	}
	spec = e.spec("hello again")
	spec.Resume = a.unknownSession
	gone, err := e.run(spec)
	if err != nil || !gone.Gone {
		t.Errorf("resuming a session %s does not have: got %+v, %v; want Gone", a.profile.Title, gone, err)
	}
}

func testStop(t *testing.T, e *e2e) {
	pidFile := filepath.Join(e.folder, "shell.pid")
	e.server.Script(
		enginetest.Shell("echo $$ > "+pidFile+"; sleep 3017"),
		enginetest.Say("stopped").Forever(),
	)
	r := e.start(e.spec("wait a while"))
	ended := make(chan struct{})
	go func() { _, _ = r.Wait(); close(ended) }()
	var shell int
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-ended:
			res, err := r.Wait()
			t.Fatalf("the run ended before its shell started: %+v, %v", res, err)
		default:
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			if shell, err = strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				break
			}
		}
	}
	agent := r.(*run).proc.Pid()
	if shell == 0 || !alive(agent) {
		_ = r.Stop(context.Background())
		t.Fatal("nothing to stop: the shell did not start")
	}
	// The shell may be in a group (and session) of its own, under a pseudo-terminal: then what
	// ends it is the terminal's hangup, not the signal to the agent's group. Its sleep goes too.
	group := append(groupMembers(agent), withCommand("sleep\x003017")...)
	t.Logf("agent %d, shell %d (group %d), the agent's group and the sleep %v", agent, shell, pgid(shell), group)
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
	gone := func() bool {
		if alive(shell) || alive(agent) {
			return false
		}
		for _, p := range group {
			if alive(p) {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(5 * time.Second); !gone() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if !gone() {
		var left []int
		for _, p := range group {
			if alive(p) {
				left = append(left, p)
			}
		}
		t.Errorf("still running after Stop: the agent %d %v, its shell %d %v, of its group %v", agent, alive(agent), shell, alive(shell), left)
		killAll(append(left, shell, agent))
	}
}

// pgid is pid's process group, or 0.
func pgid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp …
	if len(f) < 3 {
		return 0
	}
	g, _ := strconv.Atoi(f[2])
	return g
}

// groupMembers lists the processes in process group g.
func groupMembers(g int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, d := range ents {
		if pid, err := strconv.Atoi(d.Name()); err == nil && pgid(pid) == g {
			out = append(out, pid)
		}
	}
	return out
}

// withCommand lists the processes whose command line (NUL-separated) contains cmd.
func withCommand(cmd string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline"); err == nil && strings.Contains(string(b), cmd) {
			out = append(out, pid)
		}
	}
	return out
}

func killAll(pids []int) {
	for _, p := range pids {
		if p > 0 {
			if proc, err := os.FindProcess(p); err == nil {
				_ = proc.Kill()
			}
		}
	}
}

// TestRealGemini drives the real `gemini --acp` (agent-clis.md §6) against the scripted Gemini
// API inside a loopback-only network namespace.
func TestRealGemini(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Gemini CLI; not in -short")
	}
	bin := enginetest.InstallNPM(t, "@google/gemini-cli", "0.61.0", "gemini")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	p, _ := ProfileNamed("gemini")
	runRealAgent(t, realAgent{profile: p, env: enginetest.GeminiEnv, loads: true,
		// A pinned model (--model) skips the model router. With the default "auto", Gemini CLI
		// 0.61.0 answered over ACP but recorded none of the turn in the session's file, so a
		// loaded session would not carry it.
		model:          "gemini-2.5-flash",
		unknownSession: "00000000-0000-4000-8000-000000000000",
		beforeResume:   backdateGeminiSessions}, bin)
}

// backdateGeminiSessions moves the minute in the names of Gemini CLI's session files
// (~/.gemini/tmp/<project>/chats/session-2026-11-30T11-10-<id>.jsonl) back an hour, as if the
// session were resumed later. Gemini CLI 0.61.0 names the file by the minute and the session id,
// and session/load starts by writing a fresh record for the session into the file of that name:
// a session loaded within the minute it was made is overwritten before it is read, and the load
// fails with "No previous sessions found for this project".
func backdateGeminiSessions(t *testing.T, e *e2e) {
	files, _ := filepath.Glob(filepath.Join(e.home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	for _, f := range files {
		base := filepath.Base(f) // session-YYYY-MM-DDTHH-MM-xxxxxxxx.jsonl
		stamp := strings.TrimPrefix(base, "session-")
		if len(stamp) < len("2006-01-02T15-04") {
			continue
		}
		when, err := time.Parse("2006-01-02T15-04", stamp[:len("2006-01-02T15-04")])
		if err != nil {
			continue
		}
		older := "session-" + when.Add(-time.Hour).Format("2006-01-02T15-04") + stamp[len("2006-01-02T15-04"):]
		if err := os.Rename(f, filepath.Join(filepath.Dir(f), older)); err != nil {
			t.Fatal(err)
		}
	}
	if len(files) == 0 {
		t.Error("Gemini CLI kept no session file")
	}
}

// TestRealCopilot drives the real `copilot --acp` (agent-clis.md §8) in its offline
// bring-your-own-key mode against the scripted Chat Completions model inside a loopback-only
// network namespace.
func TestRealCopilot(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Copilot CLI; not in -short")
	}
	bin := enginetest.InstallNPM(t, "@github/copilot", "1.0.102", "copilot")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	p, _ := ProfileNamed("copilot")
	runRealAgent(t, realAgent{profile: p, env: enginetest.CopilotEnv, loads: true,
		unknownSession: "00000000-0000-4000-8000-000000000000"}, bin)
}

// claudeACP is Zed's claude-code-acp adapter (agent-clis.md §7) as a profile of this package's
// runner. It is not among [Profiles]: Ensemble drives Claude Code through its own driver; this
// checks the runner against a third ACP implementation.
var claudeACP = Profile{
	Name: "claude-acp", Title: "Claude Code (ACP)", Programs: []string{"claude-code-acp"},
	Args:  func(engines.Spec, string) []string { return nil },
	Login: "claude /login", Mode: "default", Sandbox: never,
}

// TestRealClaudeACP drives Zed's real claude-code-acp adapter against the scripted Anthropic
// model inside a loopback-only network namespace.
func TestRealClaudeACP(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real claude-code-acp; not in -short")
	}
	bin := enginetest.InstallNPM(t, "@zed-industries/claude-code-acp", "0.16.2", "claude-code-acp")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	runRealAgent(t, realAgent{profile: claudeACP, env: enginetest.ClaudeACPEnv, loads: true,
		unknownSession: "00000000-0000-4000-8000-000000000000",
		server:         []enginetest.Option{enginetest.WithClassifier(classifyClaudeACP)},
		unsandboxed:    "Ensemble drives Claude Code through its own driver and Claude Code's own sandbox; this adapter only checks the ACP runner"}, bin)
}

// classifyClaudeACP is [enginetest.Classify] that also knows the side requests of Claude Code
// 2.1.44 (bundled in claude-code-acp 0.16.2): picking example files from the git history, the
// paths a command read (after each Bash call), a command's prefix. None offers tools; the agent
// loop always does.
func classifyClaudeACP(r *enginetest.Request) string {
	if side := enginetest.Classify(r); side != "" || len(r.Tools) > 0 {
		return side
	}
	return "claude-side"
}
