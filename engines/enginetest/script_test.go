package enginetest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func textOf(t *testing.T, evs []sseEvent) string {
	t.Helper()
	return reassembleAnthropic(t, evs).text
}

func TestStepsInOrderAcrossEndpoints(t *testing.T) {
	s := NewServer(t)
	s.Script(Say("one"), Say("two"), Say("three"), Say("four"))
	if got := textOf(t, postSSE(t, s.URL+"/v1/messages", anthropicBody("x", "Bash"))); got != "one" {
		t.Errorf("anthropic got %q", got)
	}
	tu, _ := reassembleResponses(t, postSSE(t, s.URL+"/v1/responses", responsesBody("x", "exec_command")))
	if tu.text != "two" {
		t.Errorf("responses got %q", tu.text)
	}
	tc, _ := reassembleChat(t, postSSE(t, s.URL+"/v1/chat/completions", chatBody("x", "bash")))
	if tc.text != "three" {
		t.Errorf("chat got %q", tc.text)
	}
	tg := reassembleGemini(t, postSSE(t, s.URL+"/v1beta/models/m:streamGenerateContent?alt=sse", geminiBody("x", "run_shell_command")))
	if tg.text != "four" {
		t.Errorf("gemini got %q", tg.text)
	}
	if err := s.CheckDone(); err != nil {
		t.Error(err)
	}
}

func TestExhaustion(t *testing.T) {
	s := NewServer(t, AllowExhaustion())
	s.Script(Say("only"))
	textOf(t, postSSE(t, s.URL+"/v1/messages", anthropicBody("a", "Bash")))
	if got := textOf(t, postSSE(t, s.URL+"/v1/messages", anthropicBody("b", "Bash"))); got != ExhaustedText {
		t.Errorf("after the script: %q, want %q", got, ExhaustedText)
	}
	ex := s.Exhausted()
	if len(ex) != 1 || ex[0].LastUserText() != "b" || ex[0].Step != -1 {
		t.Fatalf("Exhausted() = %+v", ex)
	}
	if err := s.CheckDone(); err == nil || !strings.Contains(err.Error(), "exhausted") {
		t.Errorf("CheckDone() = %v, want the exhausted request named", err)
	}
}

// TestExhaustionFailsTest checks NewServer's cleanup fails the test.
func TestExhaustionFailsTest(t *testing.T) {
	ft := &fakeT{TB: t}
	s := NewServer(ft)
	textOf(t, postSSE(t, s.URL+"/v1/messages", anthropicBody("unscripted", "Bash")))
	ft.cleanup()
	if len(ft.errors) != 1 || !strings.Contains(ft.errors[0], "unscripted") {
		t.Errorf("errors = %q", ft.errors)
	}
}

// fakeT records errors and cleanups.
type fakeT struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (f *fakeT) Helper()             {}
func (f *fakeT) Logf(string, ...any) {}
func (f *fakeT) Cleanup(fn func())   { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, strings.TrimSpace(sprintf(format, args...)))
}
func (f *fakeT) cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestMatchAndTimes(t *testing.T) {
	s := NewServer(t)
	s.Script(
		Say("answer to FOO").WhenLastUser("FOO"),
		Say("any time BAR").WhenLastUser("BAR").Forever(),
		Say("generic"),
		Say("again").Repeat(2),
	)
	steps := []struct{ user, want string }{
		{"hello", "generic"}, // the FOO and BAR steps wait; the next step answers
		{"BAR please", "any time BAR"},
		{"now FOO", "answer to FOO"},
		{"x", "again"},
		{"y", "again"},
		{"BAR again", "any time BAR"},
	}
	for _, st := range steps {
		if got := textOf(t, postSSE(t, s.URL+"/v1/messages", anthropicBody(st.user, "Bash"))); got != st.want {
			t.Errorf("%q: got %q, want %q", st.user, got, st.want)
		}
	}
	if n := s.Remaining(); n != 0 {
		t.Errorf("Remaining() = %d", n)
	}
}

func TestMatchFields(t *testing.T) {
	yes, no := true, false
	r := &Request{API: Chat, Model: "m", System: "You are opencode.",
		Tools: []Tool{{Name: "bash"}},
		Messages: []Message{
			{Role: "user", Blocks: []Block{{Type: "text", Text: "run it"}}},
			{Role: "assistant", Blocks: []Block{{Type: "tool_use", ID: "c1", Name: "bash"}}},
			{Role: "tool", Blocks: []Block{{Type: "tool_result", ID: "c1", Text: "permission refused"}}},
		}}
	cases := []struct {
		name string
		m    *Match
		want bool
	}{
		{"nil", nil, true},
		{"api", &Match{API: "chat"}, true},
		{"other api", &Match{API: "anthropic"}, false},
		{"model", &Match{Model: "m"}, true},
		{"tool result text", &Match{LastUserContains: "refused"}, true},
		{"system", &Match{SystemContains: "opencode"}, true},
		{"tool offered", &Match{Tool: "bash"}, true},
		{"tool not offered", &Match{Tool: "Bash"}, false},
		{"has tool result", &Match{ToolResult: &yes}, true},
		{"no tool result", &Match{ToolResult: &no}, false},
		{"side only", &Match{Side: SideTitle}, false},
		{"any", &Match{Side: "*"}, true},
		{"func", &Match{Func: func(r *Request) bool { return len(r.Messages) == 3 }}, true},
	}
	for _, c := range cases {
		if got := c.m.Accepts(r); got != c.want {
			t.Errorf("%s: Accepts = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSideRequests sends each CLI's side request before its agent request:
// the side request is answered without using the script.
func TestSideRequests(t *testing.T) {
	claudeTitle := anthropicBody("<session>\nlist the files\n</session>\n\nWrite the title in the language the user wrote in")
	claudeTitle["system"] = []any{map[string]any{"type": "text", "text": "You are a Claude agent.\nGenerate a concise, sentence-case title (3-7 words)…\nReturn JSON with a single \"title\" field."}}
	claudeTitle["output_config"] = map[string]any{"format": map[string]any{"type": "json_schema",
		"schema": map[string]any{"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}}, "required": []string{"title"}}}}
	claudeQuota := anthropicBody("quota")
	claudeQuota["max_tokens"] = 1

	openTitle := chatBody("say hi")
	openTitle["messages"] = []any{
		map[string]any{"role": "system", "content": "You are a title generator. You output ONLY a thread title. Nothing else."},
		map[string]any{"role": "user", "content": "Generate a title for this conversation:\n"},
		map[string]any{"role": "user", "content": "say hi"},
	}

	router := geminiBody("[history]")
	router["generationConfig"] = map[string]any{"responseMimeType": "application/json", "responseJsonSchema": map[string]any{
		"type": "object", "properties": map[string]any{
			"complexity_reasoning": map[string]any{"type": "string"}, "complexity_score": map[string]any{"type": "integer"}},
		"required": []string{"complexity_reasoning", "complexity_score"}}}
	nextSpeaker := geminiBody("check", "run_shell_command")
	nextSpeaker["generationConfig"] = map[string]any{"responseMimeType": "application/json", "responseJsonSchema": map[string]any{
		"type": "object", "properties": map[string]any{
			"reasoning": map[string]any{"type": "string"}, "next_speaker": map[string]any{"type": "string", "enum": []string{"user", "model"}}}}}

	cases := []struct {
		name     string
		path     string
		side     map[string]any
		main     map[string]any
		wantSide string
		check    func(t *testing.T, evs []sseEvent)
	}{
		{"claude title", "/v1/messages?beta=true", claudeTitle, anthropicBody("list the files", "Bash"), SideTitle, func(t *testing.T, evs []sseEvent) {
			if got := textOf(t, evs); compact(t, got) != `{"title":"scripted title"}` {
				t.Errorf("title reply %q", got)
			}
		}},
		{"claude quota", "/v1/messages", claudeQuota, anthropicBody("hi", "Bash"), SideQuota, nil},
		{"opencode title", "/v1/chat/completions", openTitle, chatBody("say hi", "bash"), SideTitle, func(t *testing.T, evs []sseEvent) {
			if tu, _ := reassembleChat(t, evs); tu.text != "Scripted session" {
				t.Errorf("title reply %q", tu.text)
			}
		}},
		{"gemini router", "/v1beta/models/gemini-3.5-flash-lite:streamGenerateContent?alt=sse", router, geminiBody("hi", "run_shell_command"), SideJSON, func(t *testing.T, evs []sseEvent) {
			m := decode(t, reassembleGemini(t, evs).text)
			if m["complexity_score"] != float64(1) || m["complexity_reasoning"] == "" {
				t.Errorf("router reply %v", m)
			}
		}},
		{"gemini next speaker", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", nextSpeaker, geminiBody("hi", "run_shell_command"), SideJSON, func(t *testing.T, evs []sseEvent) {
			if m := decode(t, reassembleGemini(t, evs).text); m["next_speaker"] != "user" {
				t.Errorf("next speaker reply %v", m)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(t)
			s.Script(Say("main reply"))
			path := c.path
			evs := postSSE(t, s.URL+path, c.side)
			if c.check != nil {
				c.check(t, evs)
			}
			mainPath := path
			if c.main["contents"] != nil {
				mainPath = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
			}
			postSSE(t, s.URL+mainPath, c.main)
			reqs := s.Requests()
			if len(reqs) != 2 || reqs[0].Side != c.wantSide || reqs[0].Step != -1 || reqs[1].Side != "" || reqs[1].Step != 0 {
				t.Fatalf("requests side/step = [%q %d] [%q %d], want [%q -1] [\"\" 0]",
					reqs[0].Side, reqs[0].Step, reqs[1].Side, reqs[1].Step, c.wantSide)
			}
			if err := s.CheckDone(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestStepAnswersSideRequest(t *testing.T) {
	s := NewServer(t)
	s.Script(Say("Custom title").When(Match{Side: SideTitle}), Say("main"))
	body := chatBody("hi")
	body["messages"] = []any{map[string]any{"role": "system", "content": "You are a title generator."}, map[string]any{"role": "user", "content": "hi"}}
	if tu, _ := reassembleChat(t, postSSE(t, s.URL+"/v1/chat/completions", body)); tu.text != "Custom title" {
		t.Errorf("title = %q", tu.text)
	}
	if tu, _ := reassembleChat(t, postSSE(t, s.URL+"/v1/chat/completions", chatBody("hi", "bash"))); tu.text != "main" {
		t.Errorf("main = %q", tu.text)
	}
}

func TestErrorSteps(t *testing.T) {
	cases := []struct {
		name       string
		step       Step
		path       string
		body       map[string]any
		wantStatus int
		wantType   string // error type in the body
		retryAfter string
	}{
		{"anthropic overloaded", Overloaded(), "/v1/messages", anthropicBody("x"), 529, "overloaded_error", ""},
		{"anthropic rate limit", RateLimited(1500 * time.Millisecond), "/v1/messages", anthropicBody("x"), 429, "rate_limit_error", "2"},
		{"anthropic 500", Fail(500, "boom"), "/v1/messages", anthropicBody("x"), 500, "api_error", ""},
		{"responses 500", Fail(500, "boom"), "/v1/responses", responsesBody("x"), 500, "server_error", ""},
		{"responses overloaded", Overloaded(), "/v1/responses", responsesBody("x"), 503, "overloaded_error", ""},
		{"chat 429", RateLimited(time.Second), "/v1/chat/completions", chatBody("x"), 429, "rate_limit_exceeded", "1"},
		{"gemini 429", Fail(429, "quota"), "/v1beta/models/m:streamGenerateContent?alt=sse", geminiBody("x"), 429, "RESOURCE_EXHAUSTED", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(t)
			s.Script(c.step)
			resp := post(t, context.Background(), s.URL+c.path, c.body)
			defer resp.Body.Close()
			var m map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != c.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, c.wantStatus)
			}
			e := m["error"].(map[string]any)
			typ, _ := e["type"].(string)
			if c.path == "/v1/messages" && m["type"] != "error" {
				t.Errorf("anthropic error body %v", m)
			}
			if strings.Contains(c.path, "v1beta") {
				typ, _ = e["status"].(string)
			}
			if typ != c.wantType {
				t.Errorf("error type %q, want %q (%v)", typ, c.wantType, m)
			}
			if got := resp.Header.Get("Retry-After"); got != c.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, c.retryAfter)
			}
		})
	}
}

// handlerDone wraps s so a test learns when a request's handler returned.
func handlerDone(s *Server) (http.Handler, <-chan struct{}) {
	done := make(chan struct{}, 16)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r)
		done <- struct{}{}
	}), done
}

func TestHangUntilClientGoesAway(t *testing.T) {
	for _, c := range []struct {
		name string
		step Step
	}{
		{"bare hang", Hang()},
		{"after content", Say("partial answer").ThenHang()},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(Script{Steps: []Step{c.step}})
			h, done := handlerDone(s)
			ts := httptest.NewServer(h)
			defer ts.Close()
			defer s.Close()

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			respc := make(chan *http.Response, 1)
			go func() {
				resp, err := http.DefaultClient.Do(mustRequest(t, ctx, ts.URL+"/v1/messages", anthropicBody("x", "Bash")))
				if err == nil {
					respc <- resp
				}
				close(respc)
			}()
			if _, err := s.WaitForRequest(ctxTimeout(t, 5*time.Second), nil); err != nil {
				t.Fatal(err)
			}
			if c.step.Text != "" {
				// The content arrives; the stream stays open.
				resp := <-respc
				buf := make([]byte, 4096)
				var got strings.Builder
				for !strings.Contains(got.String(), "content_block_stop") {
					n, err := resp.Body.Read(buf)
					got.Write(buf[:n])
					if err != nil {
						t.Fatalf("read: %v (got %q)", err, got.String())
					}
				}
				if strings.Contains(got.String(), "message_stop") {
					t.Errorf("a hanging stream ended: %q", got.String())
				}
			}
			select {
			case <-done:
				t.Fatal("handler returned while the client waits")
			case <-time.After(100 * time.Millisecond):
			}
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("handler still running after the client went away")
			}
		})
	}
}

func TestCloseEndsHang(t *testing.T) {
	s := New(Script{Steps: []Step{Hang()}})
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(mustRequest(t, context.Background(), s.URL+"/v1/responses", responsesBody("x")))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	if _, err := s.WaitForRequest(ctxTimeout(t, 5*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with a hanging request", d)
	}
	<-errc
}

func TestDelay(t *testing.T) {
	s := NewServer(t)
	s.Script(Say("late").After(150*time.Millisecond), Say("cut").After(time.Hour))
	start := time.Now()
	if got := textOf(t, postSSE(t, s.URL+"/v1/messages", anthropicBody("x", "Bash"))); got != "late" {
		t.Errorf("got %q", got)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("answered after %v, want ≥ 150ms", d)
	}
	// A delay ends with the client.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := http.DefaultClient.Do(mustRequest(t, ctx, s.URL+"/v1/messages", anthropicBody("x", "Bash")))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want deadline exceeded", err)
	}
}

func TestToolResultsPerWireFormat(t *testing.T) {
	anth := anthropicBody("x", "Bash")
	anth["messages"] = []any{
		map[string]any{"role": "user", "content": "run ls"},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{"command": "ls"}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true,
			"content": []any{map[string]any{"type": "text", "text": "Permission refused by the judge"}}}}},
		map[string]any{"role": "system", "content": "mid-conversation system"},
	}
	resp := responsesBody("x", "exec_command")
	resp["input"] = []any{
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "run ls"}}},
		map[string]any{"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": `{"cmd":"ls"}`},
		map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "exec_command failed: refused"},
	}
	chat := chatBody("x", "bash")
	chat["messages"] = []any{
		map[string]any{"role": "user", "content": "run ls"},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
			map[string]any{"id": "call_a", "type": "function", "function": map[string]any{"name": "read", "arguments": `{}`}},
			map[string]any{"id": "call_b", "type": "function", "function": map[string]any{"name": "bash", "arguments": `{"command":"ls"}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_a", "content": "file body"},
		map[string]any{"role": "tool", "tool_call_id": "call_b", "content": "The user rejected permission"},
	}
	gem := geminiBody("x", "run_shell_command")
	gem["contents"] = []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "run ls"}}},
		map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "run_shell_command", "args": map[string]any{"command": "ls"}}}}},
		map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "run_shell_command", "response": map[string]any{"error": "refused by user"}}}}},
	}
	cases := []struct {
		name string
		path string
		body map[string]any
		want ToolResult
		n    int
	}{
		{"anthropic", "/v1/messages", anth, ToolResult{ID: "toolu_1", Name: "Bash", Content: "Permission refused by the judge", IsError: true}, 1},
		{"responses", "/v1/responses", resp, ToolResult{ID: "call_1", Name: "exec_command", Content: "exec_command failed: refused"}, 1},
		{"chat", "/v1/chat/completions", chat, ToolResult{ID: "call_b", Name: "bash", Content: "The user rejected permission"}, 2},
		{"gemini", "/v1beta/models/m:streamGenerateContent?alt=sse", gem, ToolResult{Name: "run_shell_command", Content: "refused by user", IsError: true}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(t)
			s.Script(Say("ok"))
			postSSE(t, s.URL+c.path, c.body)
			tr, ok := s.LastToolResult()
			if !ok || tr != c.want {
				t.Errorf("LastToolResult() = %+v %v, want %+v", tr, ok, c.want)
			}
			r := s.Requests()[0]
			if n := len(r.ToolResults()); n != c.n {
				t.Errorf("%d tool results, want %d", n, c.n)
			}
			if !strings.Contains(r.LastUserText(), c.want.Content) {
				t.Errorf("LastUserText() = %q", r.LastUserText())
			}
		})
	}
}

func TestRecordedRequest(t *testing.T) {
	s := NewServer(t)
	s.Script(Shell("ls"))
	postSSE(t, s.URL+"/v1/messages?beta=true", anthropicBody("please list", "Read", "Bash"))
	r := s.Requests()[0]
	if r.API != Anthropic || r.Model != "claude-opus-4-8" || !r.Stream || r.System != "You are a Claude agent." ||
		r.Path != "/v1/messages?beta=true" || r.Seq != 1 || r.Step != 0 {
		t.Errorf("request = %+v", r)
	}
	if !reflect.DeepEqual(r.ToolNames(), []string{"Read", "Bash"}) {
		t.Errorf("tools %v", r.ToolNames())
	}
	if got := r.Header.Get("X-Api-Key"); got != "[redacted]" {
		t.Errorf("x-api-key recorded as %q", got)
	}
	if r.LastUserText() != "please list" {
		t.Errorf("last user %q", r.LastUserText())
	}
}

func TestProbesAndUnknownPaths(t *testing.T) {
	s := NewServer(t)
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{http.MethodHead, "/", 200},
		{http.MethodGet, "/v1/models", 200},
		{http.MethodGet, "/v1beta/models", 200},
		{http.MethodPost, "/v1/messages/count_tokens", 200},
		{http.MethodPost, "/v1beta/models/m:countTokens", 200},
		{http.MethodGet, "/v1/other", 404},
	} {
		req, _ := http.NewRequest(c.method, s.URL+c.path, strings.NewReader(`{"messages":[]}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d (%s)", c.method, c.path, resp.StatusCode, c.status, b)
		}
		if c.path == "/v1/models" {
			var m struct {
				Object string `json:"object"`
				Data   []struct {
					ID, Type string
				} `json:"data"`
				HasMore *bool `json:"has_more"`
			}
			if err := json.Unmarshal(b, &m); err != nil || m.Object != "list" || len(m.Data) == 0 || m.Data[0].Type != "model" || m.HasMore == nil {
				t.Errorf("models body %s", b)
			}
		}
	}
	reqs := s.Requests()
	if len(reqs) != 6 || reqs[5].API != Other || reqs[5].Path != "/v1/other" {
		t.Errorf("requests %+v", reqs)
	}
}

func TestConcurrentRequestsTakeEachStepOnce(t *testing.T) {
	s := NewServer(t)
	const n = 20
	for i := range n {
		s.Script(Say(sprintf("reply %d", i)))
	}
	var wg sync.WaitGroup
	bodies := make(chan string, n)
	for range n {
		wg.Go(func() { bodies <- fire(s.URL+"/v1/chat/completions", chatBody("x", "bash")) })
	}
	wg.Wait()
	close(bodies)
	got := make(chan string, n)
	for b := range bodies {
		tu, _ := reassembleChat(t, readSSE(t, strings.NewReader(b)))
		got <- tu.text
	}
	close(got)
	seen := map[string]bool{}
	for g := range got {
		if seen[g] {
			t.Errorf("%q answered twice", g)
		}
		seen[g] = true
	}
	if len(seen) != n || s.Remaining() != 0 {
		t.Errorf("%d distinct replies, %d steps left", len(seen), s.Remaining())
	}
}

func TestWaitForRequest(t *testing.T) {
	s := NewServer(t)
	s.Script(Say("a"), Say("b"))
	go fire(s.URL+"/v1/messages", anthropicBody("first", "Bash"))
	r, err := s.WaitForRequest(ctxTimeout(t, 5*time.Second), func(r *Request) bool { return r.LastUserText() == "first" })
	if err != nil || r.Seq != 1 {
		t.Fatalf("WaitForRequest = %+v, %v", r, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.WaitForRequest(ctx, func(r *Request) bool { return r.LastUserText() == "never" }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
	s.Script() // nothing
	go fire(s.URL+"/v1/messages", anthropicBody("second", "Bash"))
	if r, err := s.WaitForRequest(ctxTimeout(t, 5*time.Second), func(r *Request) bool { return r.LastUserText() == "second" }); err != nil || r.Seq != 2 {
		t.Fatalf("WaitForRequest = %+v, %v", r, err)
	}
}

func TestScriptJSONRoundTrip(t *testing.T) {
	tr := true
	sc := Script{Steps: []Step{
		Say("hi").Named("greet"),
		Think("hmm", "ok").After(1500 * time.Millisecond),
		ToolCall("Bash", map[string]any{"command": "ls"}).Call("Read", map[string]any{"file_path": "a"}),
		Shell("touch x"),
		CustomToolCall("apply_patch", "*** Begin Patch\n*** End Patch\n"),
		RateLimited(2 * time.Second),
		Overloaded().Repeat(3),
		Hang(),
		Say("title").When(Match{Side: SideTitle, API: "chat", ToolResult: &tr}).Forever(),
	}, Models: []string{"m1"}, Record: "/tmp/x.jsonl"}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := sc.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := json.Marshal(back)
	b2, _ := json.Marshal(sc)
	if string(b1) != string(b2) {
		t.Errorf("round trip:\n got %s\nwant %s", b1, b2)
	}
	// A hand-written file: delays as milliseconds too.
	hand := filepath.Join(t.TempDir(), "h.json")
	writeFile(t, hand, `{"steps":[{"text":"x","delay":250},{"calls":[{"shell":"ls"}]}]}`)
	got, err := ReadScript(hand)
	if err != nil || time.Duration(got.Steps[0].Delay) != 250*time.Millisecond || got.Steps[1].Calls[0].Shell != "ls" {
		t.Errorf("ReadScript = %+v, %v", got, err)
	}
	writeFile(t, hand, `{"steps":[{"txet":"typo"}]}`)
	if _, err := ReadScript(hand); err == nil {
		t.Error("unknown field accepted")
	}
	if err := (Script{Steps: []Step{Say("x").When(Match{Func: func(*Request) bool { return true }})}}).WriteFile(path); err == nil {
		t.Error("WriteFile accepted a Match.Func")
	}
}
