package api

import (
	"context"
	"encoding/json"
	"github.com/ensemblework/ensemble/runtime/computer"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/store"
)

// envGitHelper makes this test binary git's credential helper (as `ensemble git-credential` is
// in a real run): git runs it as `<binary> <token> get` with the runtime's route in the variable.
const envGitHelper = "ENSEMBLE_TEST_GIT_HELPER_URL"

func TestMain(m *testing.M) {
	if os.Getenv(computer.AskpassSocketVar) != "" {
		os.Exit(computer.Askpass()) // sudo's askpass helper, as Ensemble's own program is
	}
	if url := os.Getenv(envGitHelper); url != "" {
		if len(os.Args) == 3 && os.Args[2] == "get" {
			if err := secrets.AskGitHelper(context.Background(), http.DefaultClient, url, os.Args[1], os.Stdin, os.Stdout); err != nil {
				os.Stderr.WriteString(err.Error() + "\n")
				os.Exit(1)
			}
		}
		os.Exit(0) // store and erase: nothing to do
	}
	os.Exit(m.Run())
}

// specCatcher is an agent that hands over its spec, then waits until it is stopped.
type specCatcher struct{ specs chan engines.Spec }

func (specCatcher) Name() string { return "catcher" }

func (c specCatcher) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &standInRun{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		h.Event(engines.Event{Kind: engines.EventStarted, Session: "s1"})
		c.specs <- spec
		<-ctx.Done()
		r.err = engines.ErrStopped
	}()
	return r, nil
}

// Real git asks the real route through the helper: the secret comes back for its host while the
// run goes on, and nothing for another host or once the run has ended.
func TestGitCredentialWithRealGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	const value = "ghp_thegitvalue0123456789abcdefABCDEF"
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	rec := records.New(st, w)
	sec, err := secrets.New(ctx, secrets.Options{DataDir: dir, Store: st, Writer: w})
	if err != nil {
		t.Fatal(err)
	}
	if err := sec.Set(ctx, "GH_PAT", secrets.Run, value, []string{"https://github.com"}); err != nil {
		t.Fatal(err)
	}
	catcher := specCatcher{specs: make(chan engines.Spec, 1)}
	self, _ := filepath.Abs(os.Args[0])
	js := jobs.New(jobs.Options{Store: st, Writer: w, Records: rec, DataDir: filepath.Join(dir, "data"),
		Drivers: map[string]engines.Driver{"catcher": catcher}, Secrets: sec, Hide: sec.Redactor().Hide,
		GitHelper: func(tok string) string { return "!'" + self + "' " + tok }})
	if err := js.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tok := NewLaunchToken()
	a := New(Options{Version: "test", Token: tok, Jobs: js, Secrets: sec}, slog.New(slog.NewTextHandler(io.Discard, nil)), st, bus, rec)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		js.Close()
		bus.Close()
		srv.Close()
		st.Close()
	})
	folder, _ := filepath.EvalSymlinks(t.TempDir())
	j, err := js.Assign(ctx, jobs.AssignRequest{Title: "Push the fix", Agent: "catcher", Folder: folder,
		Settings: jobs.SettingsInput{Secrets: &[]string{"GH_PAT"}}})
	if err != nil {
		t.Fatal(err)
	}
	var spec engines.Spec
	select {
	case spec = <-catcher.specs:
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not start")
	}

	home := t.TempDir()
	fill := func(host string) (string, error) {
		cmd := exec.Command("git", "credential", "fill")
		cmd.Dir = folder
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", envGitHelper + "=" + srv.URL + "/api/engine/git-credential"}
		for k, v := range spec.CommandEnv {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stdin = strings.NewReader("protocol=https\nhost=" + host + "\npath=me/repo.git\n\n")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := fill("github.com")
	if err != nil || !strings.Contains(out, "username=x-access-token\n") || !strings.Contains(out, "password="+value+"\n") {
		t.Fatalf("git credential fill for github.com: %v\n%s", err, out)
	}
	if out, err := fill("gitlab.com"); err == nil || strings.Contains(out, value) {
		t.Errorf("another host got a sign-in: %v\n%s", err, out)
	}
	// Bad input from a going run's helper: one sentence, 400.
	live := "Bearer " + strings.TrimPrefix(spec.CommandEnv["GIT_CONFIG_VALUE_1"], "!'"+self+"' ")
	for _, tc := range []struct{ name, body, says string }{
		{"malformed JSON", `{"protocol":`, ""},
		{"an unknown field", `{"protocol":"https","host":"github.com","password":"x"}`, "password"},
		{"no host", `{"protocol":"https"}`, "names its protocol and host"},
	} {
		code, msg := postGitCredential(t, srv.URL, live, tc.body)
		if code != 400 || !strings.Contains(msg, tc.says) || !oneSentence(msg) {
			t.Errorf("%s: %d %q", tc.name, code, msg)
		}
	}
	if code, msg := postGitCredential(t, srv.URL, live, `{"protocol":"https","host":"gitlab.com"}`); code != 404 || !oneSentence(msg) {
		t.Errorf("another host: %d %q", code, msg)
	}
	if _, err := js.Stop(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if out, err := fill("github.com"); err == nil || strings.Contains(out, value) {
		t.Errorf("the sign-in outlived the run: %v\n%s", err, out)
	}
}

// The route refuses a request without a going run's token, and bad input, each in one sentence.
func TestGitCredentialRefuses(t *testing.T) {
	f, _ := newJobsFixture(t)
	for _, tc := range []struct {
		name, auth, body string
		status           int
		says             string
	}{
		{"no token", "", `{"protocol":"https","host":"github.com"}`, 401, "answers only a run it was given to"},
		{"the launch token is not a run's", "Bearer " + f.token.Reveal(), `{"protocol":"https","host":"github.com"}`, 401, "answers only a run"},
		{"an unknown token", "Bearer ens_git_0000", `{"protocol":"https","host":"github.com"}`, 401, "answers only a run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := postGitCredential(t, f.srv.URL, tc.auth, tc.body)
			if code != tc.status || !strings.Contains(msg, tc.says) || !oneSentence(msg) {
				t.Errorf("got %d %q, want %d saying %q", code, msg, tc.status, tc.says)
			}
		})
	}
}

// postGitCredential sends body to the route with auth, answering the status and the error.
func postGitCredential(t *testing.T, base, auth, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/api/engine/git-credential", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Error string }
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Error
}

func oneSentence(s string) bool {
	return s != "" && strings.HasSuffix(s, ".") && !strings.Contains(strings.TrimSuffix(s, "."), ". ")
}
