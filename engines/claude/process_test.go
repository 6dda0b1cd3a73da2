//go:build unix

package claude

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// shortGraces makes stopping quick for a test.
func shortGraces(t *testing.T) {
	old := [4]time.Duration{interruptGrace, closeGrace, termGrace, drainGrace}
	interruptGrace, closeGrace, termGrace, drainGrace = 300*time.Millisecond, 200*time.Millisecond, 300*time.Millisecond, time.Second
	t.Cleanup(func() { interruptGrace, closeGrace, termGrace, drainGrace = old[0], old[1], old[2], old[3] })
}

// standIn writes an executable shell script standing in for claude.
func standIn(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// answerInit is shell that answers the driver's initialize request.
const answerInit = `read -r init
id=$(printf '%s' "$init" | sed 's/.*"request_id":"\([^"]*\)".*/\1/')
printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{"pid":1}}}\n' "$id"
read -r brief
`

func TestStopEndsProcessGroup(t *testing.T) {
	enginetest.NoLeaks(t)
	shortGraces(t)
	dir := t.TempDir()
	bin := standIn(t, enginetest.StopEndsGroupScript(dir))
	run, err := New(WithBinary(bin)).Start(context.Background(), engines.Spec{Folder: dir, Prompt: "x"}, newFakeHost())
	if err != nil {
		t.Fatal(err)
	}
	enginetest.CheckStopEndsGroup(t, dir, run)
}

func TestContextCancelStops(t *testing.T) {
	enginetest.NoLeaks(t)
	shortGraces(t)
	dir := t.TempDir()
	bin := standIn(t, `sleep 300 &
echo $! > `+dir+`/child
while read -r line; do :; done
wait
`)
	ctx, cancel := context.WithCancel(context.Background())
	run, err := New(WithBinary(bin)).Start(ctx, engines.Spec{Folder: dir, Prompt: "x"}, newFakeHost())
	if err != nil {
		t.Fatal(err)
	}
	child := enginetest.ReadPID(t, dir+"/child")
	cancel()
	done := make(chan error, 1)
	go func() { _, err := run.Wait(); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, engines.ErrStopped) {
			t.Errorf("got %v, want ErrStopped", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the run did not end after its context was cancelled")
	}
	deadline := time.Now().Add(5 * time.Second)
	for enginetest.Alive(child) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if enginetest.Alive(child) {
		t.Errorf("child %d still running", child)
	}
}

func TestRunWithStandIn(t *testing.T) {
	enginetest.NoLeaks(t)
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	bin := standIn(t, `printf '%s\n' "$@" > `+argsFile+`
env > `+dir+`/env
`+answerInit+`cat <<'EOF'
`+goldenInit+`
`+goldenToolUse+`
`+goldenResult+`
`+goldenThinking+`
`+goldenEnd+`
EOF
while read -r line; do :; done
`)
	t.Setenv("ANTHROPIC_API_KEY", "sk-must-not-pass")
	t.Setenv("CLAUDECODE", "1")
	h := newFakeHost()
	spec := engines.Spec{Folder: dir, Prompt: "list the files", Model: "sonnet", MaxTurns: 7, Resume: "abc", Home: "/tmp/test-home",
		Env: map[string]string{"EXTRA": "1"}, MCP: engines.MCPServer{Name: "ensemble", Command: "ensemble", Args: []string{"mcp"}}}
	run, err := New(WithBinary(bin)).Start(context.Background(), spec, h)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if res.SessionID != "8d74c0de-1111-2222-3333-444444444444" || res.Turns != 2 || !strings.HasPrefix(res.Summary, "FAKE_FINAL") {
		t.Errorf("got %+v", res)
	}
	b, _ := os.ReadFile(argsFile)
	got := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{"-p --input-format stream-json --output-format stream-json --verbose --permission-mode default --permission-prompt-tool stdio --setting-sources user --settings ",
		"--max-turns 7 --model sonnet --resume abc"} {
		if !strings.Contains(got, want) {
			t.Errorf("command line %q lacks %q", got, want)
		}
	}
	env, _ := os.ReadFile(dir + "/env")
	for _, bad := range []string{"ANTHROPIC_API_KEY=", "CLAUDECODE="} {
		if strings.Contains(string(env), "\n"+bad) {
			t.Errorf("environment kept %s", bad)
		}
	}
	for _, want := range []string{"\nHOME=/tmp/test-home\n", "\nEXTRA=1\n", "\nMCP_TOOL_TIMEOUT=86400000\n"} {
		if !strings.Contains(string(env), want) {
			t.Errorf("environment lacks %q", strings.TrimSpace(want))
		}
	}
	// The per-run files are gone with the run.
	for _, f := range strings.Fields(string(b)) {
		if strings.HasSuffix(f, "settings.json") || strings.HasSuffix(f, "mcp.json") {
			if _, err := os.Stat(f); !os.IsNotExist(err) {
				t.Errorf("%s left behind", f)
			}
		}
	}
	if n := len(h.EventsOf(engines.EventToolEnd)); n != 1 {
		t.Errorf("got %d tool_end events, want 1", n)
	}
}

func TestResumeGone(t *testing.T) {
	dir := t.TempDir()
	bin := standIn(t, `echo '`+goldenNoSession+`'
echo 'No conversation found with session ID: 0b0b0b0b-1111-2222-3333-444444444444' >&2
exit 1
`)
	run, err := New(WithBinary(bin)).Start(context.Background(), engines.Spec{Folder: dir, Prompt: "x", Resume: "0b0b0b0b-1111-2222-3333-444444444444"}, newFakeHost())
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Wait()
	if err != nil || !res.Gone {
		t.Errorf("got %+v, %v; want Gone without an error", res, err)
	}
}

func TestExitWithoutResult(t *testing.T) {
	dir := t.TempDir()
	bin := standIn(t, `echo 'Error: something broke' >&2
exit 3
`)
	run, err := New(WithBinary(bin)).Start(context.Background(), engines.Spec{Folder: dir, Prompt: "x"}, newFakeHost())
	if err != nil {
		t.Fatal(err)
	}
	_, err = run.Wait()
	if err == nil || !strings.Contains(err.Error(), "something broke") {
		t.Errorf("got %v, want an error naming the CLI's last words", err)
	}
}

func TestNotInstalled(t *testing.T) {
	dir := t.TempDir()
	_, err := New(WithBinary(filepath.Join(dir, "nope"))).Start(context.Background(), engines.Spec{Folder: dir}, newFakeHost())
	if !errors.Is(err, engines.ErrNotInstalled) || !strings.Contains(err.Error(), "npm install -g @anthropic-ai/claude-code") {
		t.Errorf("got %v, want ErrNotInstalled with how to install", err)
	}
}

func TestFindSkipsWorkFolder(t *testing.T) {
	work := t.TempDir()
	home := t.TempDir()
	for _, d := range []string{filepath.Join(work, "bin"), filepath.Join(home, ".local", "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "claude"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("SHELL", "/bin/false") // no login shell PATH
	t.Setenv("PATH", filepath.Join(work, "bin")+string(os.PathListSeparator)+"relative/bin")
	got, err := Find(home, work)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".local", "bin", "claude"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
