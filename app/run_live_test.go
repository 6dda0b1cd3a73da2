package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/sandbox"
)

// scriptedAgent is a stand-in agent for the terminal test: it says something, asks permission for
// a command (which the judge asks the person about in Ask mode), runs it when allowed, and finishes.
type scriptedAgent struct{}

func (scriptedAgent) Name() string { return "stand-in" }

func (scriptedAgent) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	r := &pipeRun{done: make(chan struct{})}
	// What confines it, as a real driver says: a sandbox of its own when the run asks for one.
	enf := sandbox.Off
	if spec.Sandbox.On {
		enf = sandbox.Own("stand-in", "The stand-in agent")
	}
	h = sandbox.Receipt(h, enf)
	go func() {
		defer close(r.done)
		h.Event(engines.Event{At: time.Now(), Kind: engines.EventStarted, Session: "s1", Model: "stand-in-1"})
		h.Event(engines.Event{At: time.Now(), Kind: engines.EventMessage, Text: "I will make the file."})
		input, _ := json.Marshal(map[string]string{"command": "touch made.txt"})
		call := engines.ToolCall{ID: "t1", Tool: "Bash", Input: input, Kind: "shell", Command: "touch made.txt", Cwd: spec.Folder}
		p, err := h.Permit(ctx, call)
		if err != nil || !p.Allow {
			h.Event(engines.Event{At: time.Now(), Kind: engines.EventMessage, Text: "Not allowed: " + p.Reason})
			return
		}
		h.Event(engines.Event{At: time.Now(), Kind: engines.EventToolStart, Tool: "Bash", ToolID: "t1", Input: input})
		os.WriteFile(filepath.Join(spec.Folder, "made.txt"), []byte("hello\n"), 0o644)
		h.Event(engines.Event{At: time.Now(), Kind: engines.EventToolEnd, Tool: "Bash", ToolID: "t1", Output: "(no output)"})
		h.Event(engines.Event{At: time.Now(), Kind: engines.EventMessage, Text: "Made it."})
	}()
	return r, nil
}

// TestRunCommandFollowsAndAsksInline runs `ensemble run` as a person would in a terminal: it shows
// the run's progress as it happens, asks the Needs me question inline, and the typed answer lets
// the agent go on.
func TestRunCommandFollowsAndAsksInline(t *testing.T) {
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Log: slog.New(slog.DiscardHandler), Drivers: map[string]engines.Driver{"stand-in": scriptedAgent{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	folder := t.TempDir()
	if out, err := exec.Command("git", "-C", folder, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if out, err := exec.Command("git", "-C", folder, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start").CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v %s", err, out)
	}
	pr, pw := io.Pipe()
	var out bytes.Buffer
	cmd := newRootCmd(&out)
	cmd.SetArgs([]string{"--data", rt.cfg.DataDir, "run", "Make a file", "--agent", "stand-in", "--folder", folder})
	cmd.SetIn(pr)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	go func() {
		// The person reads the question, then types 1 (Allow once).
		time.Sleep(500 * time.Millisecond)
		io.WriteString(pw, "1\n")
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ensemble run: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("ensemble run did not finish:\n%s", out.String())
	}
	text := out.String()
	t.Logf("terminal:\n%s", text)
	for _, want := range []string{"I will make the file.", "touch made.txt", "Allow once", "Made it.", "± made.txt +1 −0"} {
		if !strings.Contains(text, want) {
			t.Errorf("the terminal did not show %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(folder, "made.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
}

// TestRunCommandPromptGoesWhenAnsweredElsewhere: while `ensemble run` waits at its prompt, the
// question is answered elsewhere (here `ensemble needs answer`, as from another terminal); the
// prompt goes away saying how it was answered, and the trace goes on to the end without a line
// typed at it.
func TestRunCommandPromptGoesWhenAnsweredElsewhere(t *testing.T) {
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Log: slog.New(slog.DiscardHandler), Drivers: map[string]engines.Driver{"stand-in": scriptedAgent{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	folder := t.TempDir()
	in, typing := io.Pipe() // nothing is typed here
	defer typing.Close()
	out := &lockedBuffer{}
	cmd := newRootCmd(out)
	cmd.SetArgs([]string{"--data", rt.cfg.DataDir, "run", "Make a file", "--agent", "stand-in", "--folder", folder, "--no-sandbox"})
	cmd.SetIn(in)
	cmd.SetOut(out)
	cmd.SetErr(out)
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	asked := regexp.MustCompile(`(?m)^(\S+)  Permission `)
	var id string
	for id == "" {
		if m := asked.FindStringSubmatch(out.String()); m != nil && strings.Contains(out.String(), "Choose (") {
			id = m[1]
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no question at the prompt:\n%s", out.String())
		case err := <-done:
			t.Fatalf("ensemble run ended before asking: %v\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if code, got := ensemble(t, "--data", rt.cfg.DataDir, "needs", "answer", id, "1"); code != 0 {
		t.Fatalf("needs answer: %d %s", code, got)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ensemble run: %v\n%s", err, out.String())
		}
	case <-ctx.Done():
		t.Fatalf("ensemble run did not finish after the answer elsewhere:\n%s", out.String())
	}
	text := out.String()
	t.Logf("terminal:\n%s", text)
	for _, want := range []string{"Answered “Allow once” (command line).", "Made it.", "■ done"} {
		if !strings.Contains(text, want) {
			t.Errorf("the terminal did not show %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(folder, "made.txt")); err != nil {
		t.Errorf("the command allowed elsewhere did not run: %v", err)
	}
}
