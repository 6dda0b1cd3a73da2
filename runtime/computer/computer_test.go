package computer

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

type fixture struct {
	c    *Computer
	own  string
	data string
	home string
}

func newFixture(t testing.TB, o Options) *fixture {
	t.Helper()
	root := t.TempDir()
	data := filepath.Join(root, "data")
	home := filepath.Join(root, "home")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(data, 0o700)
	st, err := store.Open(context.Background(), filepath.Join(data, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	t.Cleanup(func() { bus.Close(); st.Close() })
	o.Temp = []string{filepath.Join(root, "tmp")}
	o.Home, o.DataDir, o.Workspace, o.Store, o.Writer = home, data, filepath.Join(data, "workspace"), st, ledger.New(st, bus)
	c := New(o)
	t.Cleanup(c.Close)
	own, err := c.NodeFolder("ada")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{c: c, own: own, data: data, home: home}
}

func TestNodeFolder(t *testing.T) {
	f := newFixture(t, Options{})
	fi, err := os.Stat(f.own)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the node's folder: %v, %v; want it made 0700", fi, err)
	}
	for _, bad := range []string{"", "..", "a/b"} {
		if _, err := f.c.NodeFolder(bad); err == nil {
			t.Errorf("NodeFolder(%q) made a folder", bad)
		}
	}
}

func TestRun(t *testing.T) {
	f := newFixture(t, Options{Hide: func(s string) string { return strings.ReplaceAll(s, "hunter2", "[hidden]") }})
	ctx := context.Background()
	r, err := f.c.Run(ctx, RunRequest{NodeID: "n1", Folder: f.own, Command: "echo hello; echo hunter2; pwd; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Running || r.ExitCode != 3 || !strings.Contains(r.Output, "hello") || strings.Contains(r.Output, "hunter2") || !strings.Contains(r.Output, f.own) {
		t.Fatalf("Run = %+v; want exit 3, hello, the secret hidden, in the node's folder", r)
	}
	// The runtime's own tokens and model keys stay out of a node's command.
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Setenv("ENSEMBLE_INTERNAL_TOKEN", "tok")
	r, _ = f.c.Run(ctx, RunRequest{NodeID: "n1", Folder: f.own, Command: "env"})
	if strings.Contains(r.Output, "sk-test") || strings.Contains(r.Output, "ENSEMBLE_INTERNAL_TOKEN") {
		t.Fatalf("the command saw the runtime's keys:\n%s", r.Output)
	}
}

func TestRunOutputPages(t *testing.T) {
	f := newFixture(t, Options{})
	r, err := f.c.Run(context.Background(), RunRequest{NodeID: "n1", Folder: f.own, Command: "head -c 200000 /dev/zero | tr '\\0' x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Output) != ReturnedOutput || r.More != 200000-ReturnedOutput {
		t.Fatalf("first page: %d bytes, %d more; want %d and %d", len(r.Output), r.More, ReturnedOutput, 200000-ReturnedOutput)
	}
	next, err := f.c.Output("n1", r.ID, len(r.Output))
	if err != nil || len(next.Output) != ReturnedOutput {
		t.Fatalf("Output = %d bytes, %v", len(next.Output), err)
	}
	if _, err := f.c.Output("n2", r.ID, 0); err == nil {
		t.Fatal("another node read the command's output")
	}
}

func TestRunBackgroundAndStop(t *testing.T) {
	f := newFixture(t, Options{ForegroundWait: 200 * time.Millisecond})
	ctx := context.Background()
	ended := make(chan Result, 1)
	r, err := f.c.Run(ctx, RunRequest{NodeID: "n1", Folder: f.own, Command: "sleep 1; echo done", Ended: func(r Result) { ended <- r }})
	if err != nil || !r.Running {
		t.Fatalf("Run = %+v, %v; want it going on in the background", r, err)
	}
	select {
	case e := <-ended:
		if e.Running || !strings.Contains(e.Output, "done") {
			t.Fatalf("its end: %+v", e)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the background command's end was never heard")
	}
	// Stopped: it and what it started end, and no one is woken.
	woke := make(chan Result, 1)
	r, err = f.c.Run(ctx, RunRequest{NodeID: "n1", Folder: f.own, Command: "sleep 300 & sleep 300; echo never", Background: true, Ended: func(r Result) { woke <- r }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.c.Stop("n1", r.ID)
	if err != nil || s.Running || !s.Stopped {
		t.Fatalf("Stop = %+v, %v", s, err)
	}
	if out, _ := exec.Command("pgrep", "-f", "sleep 300").Output(); len(out) > 0 {
		t.Fatalf("what it started still runs: %s", out)
	}
	select {
	case <-woke:
		t.Fatal("a stopped command woke the node")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestRunSandbox(t *testing.T) {
	f := newFixture(t, Options{})
	if ok, why := f.c.Sandboxed(); !ok {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no OS sandbox in CI: %s", why)
		}
		t.Skip(why)
	}
	ctx := context.Background()
	outside := filepath.Join(f.home, "code")
	os.MkdirAll(outside, 0o755)
	r, _ := f.c.Run(ctx, RunRequest{NodeID: "n1", Folder: f.own, Command: "echo x > " + outside + "/a.txt"})
	if r.ExitCode == 0 {
		t.Fatalf("the sandbox let a command write outside its folders: %+v", r)
	}
	r, _ = f.c.Run(ctx, RunRequest{NodeID: "n1", Folder: f.own, Command: "echo x > " + outside + "/a.txt", Write: []string{outside}})
	if r.ExitCode != 0 {
		t.Fatalf("a folder the decision allowed could not be written: %+v", r)
	}
	os.WriteFile(filepath.Join(f.data, "ensemble.db-secret"), []byte("x"), 0o600)
	r, _ = f.c.Run(ctx, RunRequest{NodeID: "n1", Folder: f.own, Command: "ls " + f.data})
	if strings.Contains(r.Output, "ensemble.db") {
		t.Fatalf("a command read Ensemble's data folder: %+v", r)
	}
}

func TestFiles(t *testing.T) {
	f := newFixture(t, Options{})
	p := filepath.Join(f.own, "notes", "a.md")
	if err := WriteFile(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, make([]byte, MaxFileSize+1)); err == nil {
		t.Fatal("a file over 1 MB was written")
	}
	if err := MoveFile(p, filepath.Join(f.own, "b.md")); err != nil {
		t.Fatal(err)
	}
	WriteFile(p, []byte("two"))
	if err := MoveFile(p, filepath.Join(f.own, "b.md")); err == nil || !strings.Contains(err.Error(), "never replaces") {
		t.Fatalf("a move over a file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.own, "b.md")); string(b) != "one" {
		t.Fatalf("b.md holds %q", b)
	}
	os.Symlink("/etc/passwd", filepath.Join(f.own, "link"))
	if err := WriteFile(filepath.Join(f.own, "link"), []byte("x")); err == nil {
		t.Fatal("a write went through a link")
	}
	if err := DeletePath(f.own, true, []string{f.own}); err == nil {
		t.Fatal("the node's own folder was deleted")
	}
	if err := DeletePath(filepath.Join(f.own, "notes"), false, nil); err == nil {
		t.Fatal("a folder with files was deleted without recursive")
	}
	if err := DeletePath(filepath.Join(f.own, "notes"), true, nil); err != nil {
		t.Fatal(err)
	}
}

func TestGit(t *testing.T) {
	f := newFixture(t, Options{})
	repo := filepath.Join(f.own, "repo")
	os.MkdirAll(repo, 0o755)
	cmd := exec.Command("bash", "-c", "git init -q -b main && git -c user.email=a@b -c user.name=A commit -q --allow-empty -m first && echo x > a.txt")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	for _, tt := range []struct {
		in   GitRequest
		want string
	}{
		{GitRequest{Op: "status"}, "?? a.txt"},
		{GitRequest{Op: "log"}, "first"},
		{GitRequest{Op: "branch"}, "main"},
	} {
		line, err := GitLine(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		r, err := f.c.Run(context.Background(), RunRequest{NodeID: "n1", Folder: repo, Command: line})
		if err != nil || !strings.Contains(r.Output, tt.want) {
			t.Errorf("git %s: %+v, %v; want %q", tt.in.Op, r, err, tt.want)
		}
	}
	for _, bad := range []GitRequest{{Op: "push"}, {Op: "log", Ref: "--output=/tmp/x"}, {Op: "status", Ref: "main"}, {Op: "diff", Ref: "a;b"}} {
		if _, err := GitLine(bad); err == nil {
			t.Errorf("GitLine(%+v) took it", bad)
		}
	}
}

func TestHTTP(t *testing.T) {
	f := newFixture(t, Options{Hide: func(s string) string { return strings.ReplaceAll(s, "hunter2", "[hidden]") }})
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "other") }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/ok", http.StatusTemporaryRedirect)
		default:
			fmt.Fprint(w, "ok hunter2 "+r.Method)
		}
	}))
	defer srv.Close()
	self := func(u *url.URL) error {
		if Address(u) != Address(mustURL(srv.URL)) {
			return fmt.Errorf("asks")
		}
		return nil
	}
	ctx := context.Background()
	a, err := f.c.HTTP(ctx, HTTPRequest{URL: srv.URL + "/here", Method: "POST"}, self)
	if err != nil || a.Status != 200 || a.Body != "ok [hidden] POST" {
		t.Fatalf("HTTP = %+v, %v", a, err)
	}
	a, err = f.c.HTTP(ctx, HTTPRequest{URL: srv.URL + "/away"}, self)
	if err != nil || a.Status != http.StatusFound || a.Body == "other" {
		t.Fatalf("a redirect to an address not allowed was followed: %+v, %v", a, err)
	}
	if _, err := f.c.HTTP(ctx, HTTPRequest{URL: "http://example.invalid/"}, self); err == nil {
		t.Fatal("a name off this computer was reached")
	}
}

func mustURL(s string) *url.URL { u, _ := url.Parse(s); return u }

// TestKeptAnswers: Always is kept across a restart; This mission only for its mission.
func TestKeptAnswers(t *testing.T) {
	dir := t.TempDir()
	open := func() (Answers, func()) {
		st, err := store.Open(context.Background(), filepath.Join(dir, "ensemble.db"))
		if err != nil {
			t.Fatal(err)
		}
		bus := events.NewBus()
		return Answers{Store: st, Writer: ledger.New(st, bus)}, func() { bus.Close(); st.Close() }
	}
	ctx := context.Background()
	a, done := open()
	code, docs := Scope{ScopeFolder, "/home/me/code"}, Scope{ScopeFolder, "/home/me/Documents"}
	if err := a.Keep(ctx, "n1", "mission:msn_1", KeepAlways, []Scope{code}); err != nil {
		t.Fatal(err)
	}
	if err := a.Keep(ctx, "n1", "mission:msn_1", KeepMission, []Scope{docs}); err != nil {
		t.Fatal(err)
	}
	if err := a.Keep(ctx, "n1", "", KeepMission, []Scope{docs}); err == nil {
		t.Fatal("a mission answer without a mission was kept")
	}
	done()
	a, done = open() // a restart
	defer done()
	for _, tt := range []struct {
		node, mission string
		want          []Scope
	}{
		{"n1", "mission:msn_1", []Scope{code, docs}},
		{"n1", "mission:msn_2", []Scope{code}},
		{"n2", "mission:msn_1", nil},
	} {
		got, err := a.Kept(ctx, tt.node, tt.mission)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("Kept(%s, %s) = %v, %v; want %v", tt.node, tt.mission, got, err, tt.want)
		}
	}
	p := Policy{Home: "/home/me", Own: []string{"/w/nodes"}, Sandboxed: true}
	p.Kept, _ = a.Kept(ctx, "n1", "mission:msn_2")
	if d := Decide(Call{Op: OpWrite, Folder: "/w/nodes/ada", Paths: []string{"/home/me/Documents/x.md"}}, p); d.Allowed() {
		t.Fatal("another mission's answer let a write through")
	}
	if d := Decide(Call{Op: OpRun, Folder: "/home/me/code", Command: "make"}, p); !d.Allowed() || d.Rung != RungKept {
		t.Fatalf("the Always answer did not hold after a restart: %+v", d)
	}
}
