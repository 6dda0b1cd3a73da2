package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/store/storetest"
)

// The canaries: a run secret shaped like nothing the shape-based redaction knows, and a provider
// key. Neither may appear anywhere but in the encrypted store.
const (
	canaryRunSecret   = "Zq8-canary-4f1d-leakprobe"
	canaryProviderKey = "sk-ant-canary-provider-key-0001"
)

// echoAgent is a stand-in agent whose run prints the run secret everywhere an agent can: a tool's
// input and output, a message, and its summary (as an agent that ran `echo $CANARY_VALUE` would).
type echoAgent struct{}

func (echoAgent) Name() string { return "echo" }

func (echoAgent) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	r := &echoRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		h.Event(engines.Event{Kind: engines.EventStarted, Session: "s1"})
		in, _ := json.Marshal(map[string]string{"command": "echo " + canaryRunSecret})
		h.Event(engines.Event{Kind: engines.EventToolStart, Tool: "Bash", ToolID: "t1", Input: in})
		h.Event(engines.Event{Kind: engines.EventToolEnd, Tool: "Bash", ToolID: "t1", Output: canaryRunSecret + "\n"})
		h.Event(engines.Event{Kind: engines.EventMessage, Text: "The value is " + canaryRunSecret + "."})
		r.res = engines.Result{Summary: "Printed " + canaryRunSecret, Turns: 1}
	}()
	return r, nil
}

type echoRun struct {
	done chan struct{}
	res  engines.Result
}

func (r *echoRun) Wait() (engines.Result, error)  { <-r.done; return r.res, nil }
func (r *echoRun) Stop(ctx context.Context) error { return nil }

// lockedBuffer is a log's output, written from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSecretsNeverLeak saves a run secret and a provider key through the command line, runs an
// agent that prints the secret, and has the assistant read the runs; then looks for either value
// in every SQLite table, every file in the data folder, the runtime's debug log, the event stream
// and every request the model was sent.
func TestSecretsNeverLeak(t *testing.T) {
	model := enginetest.NewServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	var logs lockedBuffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: dir, Addr: "127.0.0.1:0", Log: log,
		Drivers: map[string]engines.Driver{"echo": echoAgent{}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	token := readToken(t, rt)
	do := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, rt.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	// The event stream, from before anything is saved.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stream lockedBuffer
	streamDone := make(chan struct{})
	req, _ := http.NewRequestWithContext(ctx, "GET", rt.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("event stream: %v %v", resp, err)
	}
	go func() {
		defer close(streamDone)
		defer resp.Body.Close()
		io.Copy(&stream, bufio.NewReader(resp.Body))
	}()

	data := "--data=" + dir
	if code, out := ensembleIn(t, canaryRunSecret+"\n", data, "secrets", "set", "CANARY_VALUE"); code != 0 {
		t.Fatalf("secrets set: %q", out)
	}
	if code, out := ensembleIn(t, canaryProviderKey+"\n", data, "secrets", "set-key", "anthropic"); code != 0 {
		t.Fatalf("secrets set-key: %q", out)
	}

	// A run whose agent prints the secret.
	folder := t.TempDir()
	code, body := do("POST", "/api/agent/assign", fmt.Sprintf(`{"title":"Print it","agent":"echo","folder":%q}`, folder))
	if code != 201 {
		t.Fatalf("assign: %d %s", code, body)
	}
	var job struct {
		ID string `json:"id"`
	}
	json.Unmarshal(body, &job)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, b := do("GET", "/api/agent/jobs/"+job.ID, "")
		var j struct {
			Status string `json:"status"`
		}
		json.Unmarshal(b, &j)
		if j.Status == "done" || j.Status == "failed" || j.Status == "stopped" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The assistant, on the saved key, reads the runs back to the model.
	model.Script(
		enginetest.ToolCall("hub_list_agent_sessions", map[string]any{}),
		enginetest.Say("Listed."),
	)
	if code, b := do("POST", "/api/assistant/turn", `{"text":"what did the last run print?","provider":"anthropic","model":"m"}`); code != 200 {
		t.Fatalf("assistant turn: %d %s", code, b)
	}
	if len(model.Requests()) == 0 {
		t.Fatal("the assistant sent the model nothing")
	}

	// A node's command with the secret in its environment prints it, plain and in base64: the node
	// (and so the model) reads it hidden. CANARY_VALUE has no allowed origins, so it is an
	// environment secret.
	if code, b := do("PUT", "/api/assistant/settings", `{"provider":"anthropic","model":"m"}`); code != 200 {
		t.Fatalf("assistant settings: %d %s", code, b)
	}
	code, body = do("POST", "/api/node/nodes", `{"name":"Ada","role":"developer"}`)
	if code != 201 {
		t.Fatalf("node: %d %s", code, body)
	}
	var n struct {
		DMRoomID string `json:"dmRoomId"`
	}
	json.Unmarshal(body, &n)
	yes := true
	model.Script(
		enginetest.ToolCall("computer_run", map[string]any{"command": "echo $CANARY_VALUE; printf %s \"$CANARY_VALUE\" | base64", "secrets": []string{"CANARY_VALUE"}}).
			When(enginetest.Match{LastUserContains: "run the deploy check"}),
		enginetest.Say("It ran.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "exited 0"}),
	)
	before := len(model.Requests())
	if code, b := do("POST", "/api/node/rooms/"+n.DMRoomID+"/messages", `{"body":"Please run the deploy check command with my secret.","clientId":"c1"}`); code != 201 {
		t.Fatalf("node message: %d %s", code, b)
	}
	deadline = time.Now().Add(30 * time.Second)
	for len(model.Requests()) < before+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(model.Requests()) < before+2 {
		t.Fatal("the node's turn did not call its command")
	}
	if last := model.Requests()[len(model.Requests())-1]; !strings.Contains(string(last.Body), "exited 0") {
		t.Fatalf("the node's command did not run: %s", last.Body)
	}
	time.Sleep(200 * time.Millisecond) // the last events reach the stream
	cancel()
	<-streamDone

	values := []string{canaryRunSecret, canaryProviderKey, base64.StdEncoding.EncodeToString([]byte(canaryRunSecret))}
	leaks := func(where, text string) {
		t.Helper()
		for _, v := range values {
			if strings.Contains(text, v) {
				i := strings.Index(text, v)
				t.Errorf("%s holds %q: …%s…", where, v, text[max(0, i-120):min(len(text), i+len(v)+40)])
			}
		}
	}

	// Every SQLite table, every column, as text.
	tables := storetest.Dump(t, rt.store.Reader())
	if len(tables) < 5 {
		t.Fatalf("tables %v", tables)
	}
	for name, tb := range tables {
		var text strings.Builder
		for _, vals := range tb.Rows {
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					text.Write(b)
				} else {
					fmt.Fprint(&text, v)
				}
				text.WriteByte('\t')
			}
			text.WriteByte('\n')
		}
		leaks("table "+name, text.String())
	}
	// Every file in the data folder; the database's own files were dumped above, and their raw bytes
	// must not hold a value either.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil {
			leaks("file "+strings.TrimPrefix(p, dir), string(b))
		}
		return nil
	})
	leaks("the runtime's debug log", logs.String())
	leaks("the event stream", stream.String())
	for _, r := range model.Requests() {
		leaks(fmt.Sprintf("model request %d (%s)", r.Seq, r.Path), string(r.Body)+r.System)
	}
	if !strings.Contains(stream.String(), "run.") {
		t.Errorf("the event stream carried no run events; the check above saw nothing:\n%s", stream.String())
	}
}
