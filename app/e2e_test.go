package app

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/ensemblework/ensemble/engines/agentproc"
)

// buildBinary builds ensemble once for the tests that run it as a person would.
var buildBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "ensemble-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "ensemble")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/ensemblework/ensemble").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// served is an `ensemble serve` process.
type served struct {
	cmd  *exec.Cmd
	f    apiFile
	out  *syncBuffer
	done chan struct{} // closed when the process has exited, with err set
	err  error
}

func startServe(t testing.TB, data string) *served {
	t.Helper()
	return startServeAt(t, data, "127.0.0.1:0")
}

// startServeAt starts `ensemble serve --addr addr` and waits until it answers.
func startServeAt(t testing.TB, data, addr string) *served {
	t.Helper()
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(apiFilePath(data)) // a kill -9 leaves it behind; wait for the new one below
	cmd := exec.Command(bin, "serve", "--addr", addr, "--data", data)
	// Its own process group, ended whole: what the runtime starts in the background (the login
	// shell it reads PATH from) must not outlive the test and slow the next one.
	agentproc.OwnGroup(cmd)
	out := &syncBuffer{}
	pr, pw, _ := os.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	s := &served{cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
		}
	}()
	go func() { s.err = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { agentproc.SignalGroup(cmd, true); <-s.done })
	deadline := time.Now().Add(20 * time.Second)
	for {
		if f, err := readAPIFile(data); err == nil && f.PID == cmd.Process.Pid && healthy(context.Background(), f.URL) {
			s.f = f
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("ensemble serve did not come up:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *served) post(ctx context.Context, path, body string) (int, map[string]any, error) {
	return s.send(ctx, "POST", path, body)
}

// patch is post with PATCH.
func (s *served) patch(ctx context.Context, path, body string) (int, map[string]any, error) {
	return s.send(ctx, "PATCH", path, body)
}

func (s *served) send(ctx context.Context, method, path, body string) (int, map[string]any, error) {
	req, _ := http.NewRequestWithContext(ctx, method, s.f.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.f.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, nil
}

// TestKill9LosesNothing creates tasks from 8 concurrent clients and kills the runtime with SIGKILL
// the moment the 500th creation is answered, while the other clients' requests are in flight; then
// restarts it: every task whose creation was answered 201 must be there, once, and nothing else but
// what was in flight at the kill.
func TestKill9LosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	data := t.TempDir()
	s := startServe(t, data)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const clients, created = 8, 500
	var (
		mu        sync.Mutex
		answered  = map[string]bool{}
		attempted atomic.Int64
		wg        sync.WaitGroup
	)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := attempted.Add(1)
				if i > 2*created {
					t.Errorf("the runtime still answered after %d creations; the kill did not take", 2*created)
					return
				}
				title := fmt.Sprintf("durable %04d", i)
				code, _, err := s.post(ctx, "/api/tasks", `{"title": "`+title+`"}`)
				if err != nil {
					return // the runtime is gone
				}
				if code != http.StatusCreated {
					t.Errorf("create %q: status %d", title, code)
					return
				}
				mu.Lock()
				answered[title] = true
				n := len(answered)
				mu.Unlock()
				if n == created {
					s.cmd.Process.Signal(syscall.SIGKILL)
				}
			}
		}()
	}
	wg.Wait()
	<-s.done
	if len(answered) < created {
		t.Fatalf("only %d tasks were created before the runtime went away", len(answered))
	}

	s2 := startServe(t, data)
	req, _ := http.NewRequest("GET", s2.f.URL+"/api/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+s2.f.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tasks []struct{ Title string } `json:"tasks"`
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("list after the restart: %v", err)
	}
	seen := map[string]int{}
	for _, task := range list.Tasks {
		seen[task.Title]++
	}
	for title := range answered {
		if seen[title] != 1 {
			t.Errorf("task %q was answered 201 but is there %d times", title, seen[title])
		}
	}
	unanswered := 0
	for title, n := range seen {
		if n > 1 {
			t.Errorf("task %q is there %d times", title, n)
		}
		if !answered[title] {
			unanswered++
		}
	}
	// A creation committed but not yet answered when the kill came may be there; each client had at
	// most one request in flight.
	if unanswered > clients {
		t.Errorf("%d tasks are there that were never answered; at most %d were in flight", unanswered, clients)
	}
	t.Logf("%d answered 201 before the kill, %d sent; %d in the database after (%d of them in flight at the kill)",
		len(answered), attempted.Load(), len(list.Tasks), unanswered)

	db, err := sql.Open("sqlite", "file:"+dbPath(data)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
}

func TestServeStopsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) { serveStopsOn(t, sig) })
	}
}

// serveStopsOn starts serve, checks api.json and that a second runtime for the folder is refused,
// then stops it with sig: it must exit 0 and remove api.json.
func serveStopsOn(t *testing.T, sig syscall.Signal) {
	data := t.TempDir()
	s := startServe(t, data)
	if st, err := os.Stat(apiFilePath(data)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("api.json: %v, mode %v, want 0600", err, st.Mode().Perm())
	}
	if strings.Contains(s.out.String(), s.f.Token) {
		t.Error("the launch token was printed")
	}
	// A second runtime for the same data folder refuses to start.
	bin, _ := buildBinary()
	out, err := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", data).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already running") {
		t.Errorf("second serve: %v %s", err, out)
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
		if s.err != nil {
			t.Errorf("serve exited with %v after %v", s.err, sig)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not stop within 10 s of %v", sig)
	}
	if _, err := os.Stat(apiFilePath(data)); !os.IsNotExist(err) {
		t.Errorf("api.json still there after a clean stop: %v", err)
	}
}

// TestServeFallsBackToAFreePort starts serve on a port another program holds: it must come up on
// another port, say so, and write that port to api.json.
func TestServeFallsBackToAFreePort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	s := startServeAt(t, t.TempDir(), taken.Addr().String())
	if s.f.Port == port || s.f.URL != "http://127.0.0.1:"+strconv.Itoa(s.f.Port) {
		t.Errorf("api.json says %s (port %d) while port %d is taken", s.f.URL, s.f.Port, port)
	}
	want := fmt.Sprintf("Port %d is taken, so Ensemble listens on port %d instead.", port, s.f.Port)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.out.String(), want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(s.out.String(), want) {
		t.Errorf("serve's output does not say %q:\n%s", want, s.out.String())
	}
}

// syncBuffer is a strings.Builder safe to write from one goroutine while another reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) WriteString(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(v)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
