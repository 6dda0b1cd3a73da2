//go:build unix

package codex

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

// standIn writes an executable shell script standing in for codex.
func standIn(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// answer is shell that reads the driver's next request and answers it with
// the JSON result (or error) given, echoing the request's id.
func answer(field, body string) string {
	return `read -r line
id=$(printf '%s' "$line" | sed 's/^{"id":\([0-9]*\).*/\1/')
printf '{"id":%s,"` + field + `":%s}\n' "$id" '` + body + `'
`
}

// startProtocol answers initialize, reads initialized, and answers
// account/read with acct.
func startProtocol(acct string) string {
	return answer("result", `{"userAgent":"ensemble/0.171.0","codexHome":"/x","platformFamily":"unix","platformOs":"linux"}`) +
		"read -r initialized\n" + answer("result", acct)
}

func TestSignedOut(t *testing.T) {
	enginetest.NoLeaks(t)
	dir := t.TempDir()
	bin := standIn(t, startProtocol(`{"account":null,"requiresOpenaiAuth":true}`)+`while read -r line; do echo "$line" >> `+dir+`/after; done
`)
	run, err := New(WithBinary(bin)).Start(context.Background(), engines.Spec{Folder: dir, Prompt: "x"}, newFakeHost())
	if err != nil {
		t.Fatal(err)
	}
	_, err = run.Wait()
	if !errors.Is(err, engines.ErrSignedOut) || !strings.Contains(err.Error(), "Open the ChatGPT app (or run codex login) and sign in") {
		t.Errorf("got %v, want ErrSignedOut with how to sign in", err)
	}
	if b, _ := os.ReadFile(dir + "/after"); len(b) > 0 {
		t.Errorf("the driver went on after account/read: %s", b)
	}
}

func TestOwnProviderCountsAsSignedIn(t *testing.T) {
	enginetest.NoLeaks(t)
	dir := t.TempDir()
	bin := standIn(t, startProtocol(`{"account":null,"requiresOpenaiAuth":false}`)+
		answer("result", `{"thread":{"id":"01a22bb5","turns":[]},"model":"gpt-5.5","approvalPolicy":"untrusted"}`)+
		`read -r turn
echo "$turn" > `+dir+`/turn
printf '%s\n' '{"id":4,"result":{"turn":{"id":"01a22bb5-a2be","items":[],"status":"inProgress"}}}'
printf '%s\n' '`+goldenMessage+`'
printf '%s\n' '`+goldenTurnDone+`'
while read -r line; do :; done
`)
	h := newFakeHost()
	run, err := New(WithBinary(bin)).Start(context.Background(), engines.Spec{Folder: dir, Prompt: "list the files", Effort: "low"}, h)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Wait()
	if err != nil || res.Summary != "FAKE_FINAL: done." || res.SessionID != "01a22bb5" {
		t.Errorf("got %+v, %v", res, err)
	}
	b, _ := os.ReadFile(dir + "/turn")
	if !strings.Contains(string(b), `"method":"turn/start"`) || !strings.Contains(string(b), `"effort":"low"`) || !strings.Contains(string(b), "list the files") {
		t.Errorf("turn/start was %s", b)
	}
	if st := h.EventsOf(engines.EventStarted); len(st) != 1 || st[0].Session != "01a22bb5" || st[0].Model != "gpt-5.5" {
		t.Errorf("started events %+v", st)
	}
}

func TestResumeGone(t *testing.T) {
	enginetest.NoLeaks(t)
	dir := t.TempDir()
	bin := standIn(t, startProtocol(`{"account":{"type":"chatgpt","email":"a@b.c","planType":"plus"},"requiresOpenaiAuth":true}`)+
		`read -r line
echo "$line" > `+dir+`/resume
printf '%s\n' '{"id":3,"error":{"code":-32600,"message":"no rollout found for thread id 0b0b0b0b-1111-2222-3333-444444444444"}}'
while read -r line; do :; done
`)
	run, err := New(WithBinary(bin)).Start(context.Background(), engines.Spec{Folder: dir, Prompt: "x", Resume: "0b0b0b0b-1111-2222-3333-444444444444"}, newFakeHost())
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Wait()
	if err != nil || !res.Gone {
		t.Errorf("got %+v, %v; want Gone without an error", res, err)
	}
	if b, _ := os.ReadFile(dir + "/resume"); !strings.Contains(string(b), `"method":"thread/resume"`) {
		t.Errorf("sent %s, want thread/resume", b)
	}
}

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

func TestExitWithoutTurn(t *testing.T) {
	dir := t.TempDir()
	bin := standIn(t, `echo 'Error: something broke' >&2
exit 3
`)
	run, err := New(WithBinary(bin)).Start(context.Background(), engines.Spec{Folder: dir, Prompt: "x"}, newFakeHost())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Wait(); err == nil || !strings.Contains(err.Error(), "something broke") {
		t.Errorf("got %v, want an error naming the CLI's last words", err)
	}
}

func TestNotInstalled(t *testing.T) {
	dir := t.TempDir()
	_, err := New(WithBinary(filepath.Join(dir, "nope"))).Start(context.Background(), engines.Spec{Folder: dir}, newFakeHost())
	if !errors.Is(err, engines.ErrNotInstalled) || !strings.Contains(err.Error(), "npm install -g @openai/codex") {
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
		if err := os.WriteFile(filepath.Join(d, "codex"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("SHELL", "/bin/false") // no login shell PATH
	t.Setenv("PATH", filepath.Join(work, "bin")+string(os.PathListSeparator)+"relative/bin")
	got, err := Find(home, work)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".local", "bin", "codex"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
