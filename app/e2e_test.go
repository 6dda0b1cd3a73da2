package app

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
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
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(apiFilePath(data)) // a kill -9 leaves it behind; wait for the new one below
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", data)
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
	t.Cleanup(func() { cmd.Process.Kill(); <-s.done })
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
	req, _ := http.NewRequestWithContext(ctx, "POST", s.f.URL+path, strings.NewReader(body))
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

// TestKill9LosesNothing creates tasks from 8 clients, kills the runtime with SIGKILL part-way, and
// restarts it: every task whose creation was answered 201 must be there, once.
func TestKill9LosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	data := t.TempDir()
	s := startServe(t, data)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const clients, total = 8, 500
	var (
		mu       sync.Mutex
		answered = map[string]bool{}
		next     = make(chan int, total)
		wg       sync.WaitGroup
	)
	for i := range total {
		next <- i
	}
	close(next)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				title := fmt.Sprintf("durable %03d", i)
				code, _, err := s.post(ctx, "/api/tasks", `{"title": "`+title+`"}`)
				if err != nil {
					return // the runtime is gone
				}
				if code == http.StatusCreated {
					mu.Lock()
					answered[title] = true
					n := len(answered)
					mu.Unlock()
					if n == total/2 {
						s.cmd.Process.Signal(syscall.SIGKILL)
					}
				}
			}
		}()
	}
	wg.Wait()
	<-s.done
	if len(answered) < total/2 {
		t.Fatalf("only %d tasks were created before the kill", len(answered))
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
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	seen := map[string]int{}
	for _, task := range list.Tasks {
		seen[task.Title]++
	}
	for title := range answered {
		if seen[title] != 1 {
			t.Errorf("task %q was answered 201 but is there %d times", title, seen[title])
		}
	}
	for title, n := range seen {
		if n > 1 {
			t.Errorf("task %q is there %d times", title, n)
		}
	}
	t.Logf("%d answered 201 before the kill, %d in the database after", len(answered), len(list.Tasks))

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
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		if s.err != nil {
			t.Errorf("serve exited with %v after SIGTERM", s.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10 s of SIGTERM")
	}
	if _, err := os.Stat(apiFilePath(data)); !os.IsNotExist(err) {
		t.Errorf("api.json still there after a clean stop: %v", err)
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
