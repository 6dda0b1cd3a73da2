package claude

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// Golden lines, as Claude Code 2.1.197 printed them (agent-clis.md §3),
// trimmed of fields the driver does not read.
const (
	goldenInit      = `{"type":"system","subtype":"init","cwd":"/work/ws","session_id":"8d74c0de-1111-2222-3333-444444444444","tools":["Task","Bash","mcp__probe__echo"],"mcp_servers":[{"name":"probe","status":"connected"}],"model":"claude-opus-4-8[1m]","permissionMode":"default","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.197","output_style":"default","uuid":"u1"}`
	goldenToolUse   = `{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_5d2f","name":"Bash","input":{"command":"ls","description":"List files"}}],"stop_reason":null},"parent_tool_use_id":null,"session_id":"8d74c0de-1111-2222-3333-444444444444","uuid":"u2"}`
	goldenResult    = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_5d2f","type":"tool_result","content":"a.txt","is_error":false}]},"parent_tool_use_id":null,"session_id":"8d74c0de-1111-2222-3333-444444444444","uuid":"u3","timestamp":"2026-01-01T00:00:00Z","tool_use_result":{"stdout":"a.txt","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}}`
	goldenThinking  = `{"type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"thinking","thinking":"The folder holds a.txt.","signature":"x"},{"type":"text","text":"FAKE_FINAL: done. tool output starts: a.txt"}]},"parent_tool_use_id":null,"session_id":"8d74c0de-1111-2222-3333-444444444444","uuid":"u4"}`
	goldenEnd       = `{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":295,"num_turns":2,"result":"FAKE_FINAL: done. tool output starts: a.txt","stop_reason":"end_turn","session_id":"8d74c0de-1111-2222-3333-444444444444","total_cost_usd":0.00035,"usage":{"input_tokens":120,"cache_creation_input_tokens":7,"cache_read_input_tokens":30,"output_tokens":42},"modelUsage":{},"permission_denials":[],"terminal_reason":"completed","uuid":"u5"}`
	goldenCanUse    = `{"type":"control_request","request_id":"f1d8","request":{"subtype":"can_use_tool","tool_name":"Bash","display_name":"Bash","input":{"command":"touch made_by_tool.txt","description":"Create a file"},"description":"Create a file","permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch made_by_tool.txt"}],"behavior":"allow","destination":"localSettings"}],"blocked_path":"/work/ws/made_by_tool.txt","tool_use_id":"toolu_f6d2"}}`
	goldenHook      = `{"type":"control_request","request_id":"d6a0","request":{"subtype":"hook_callback","callback_id":"hook_pre_bash","input":{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}},"tool_use_id":"toolu_f6d2"}}`
	goldenNoSession = `{"type":"result","subtype":"error_during_execution","duration_ms":0,"duration_api_ms":0,"is_error":true,"num_turns":0,"stop_reason":null,"session_id":"0b0b0b0b-1111-2222-3333-444444444444","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"modelUsage":{},"permission_denials":[],"uuid":"u6","errors":["No conversation found with session ID: 0b0b0b0b-1111-2222-3333-444444444444"]}`
)

// peer is the CLI's end of a connection over io.Pipe.
type peer struct {
	t    *testing.T
	w    *io.PipeWriter
	out  chan map[string]any
	sess *session
	conn *conn
}

func newPeer(t *testing.T, host *fakeHost) *peer {
	t.Helper()
	toDriver, driverIn := io.Pipe()
	fromDriver, driverOut := io.Pipe()
	sess := newSession(host, "/work/ws", slog.New(slog.DiscardHandler))
	c := newConn(driverOut, sess)
	p := &peer{t: t, w: driverIn, out: make(chan map[string]any, 16), sess: sess, conn: c}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = c.serve(context.Background(), toDriver)
	}()
	go func() {
		sc := bufio.NewScanner(fromDriver)
		sc.Buffer(nil, maxLine)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("driver wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			p.out <- m
		}
		close(p.out)
	}()
	t.Cleanup(func() {
		driverIn.Close()
		<-served
		driverOut.Close()
	})
	return p
}

func (p *peer) send(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(p.w, l+"\n"); err != nil {
			p.t.Fatal(err)
		}
	}
}

func (p *peer) read() map[string]any {
	p.t.Helper()
	select {
	case m := <-p.out:
		return m
	case <-time.After(10 * time.Second):
		p.t.Fatal("timed out waiting for the driver to write")
		return nil
	}
}

// response reads a control_response and returns its inner response.
func (p *peer) response(id string) map[string]any {
	p.t.Helper()
	m := p.read()
	if m["type"] != "control_response" {
		p.t.Fatalf("got %v, want a control_response", m)
	}
	r := m["response"].(map[string]any)
	if r["request_id"] != id || r["subtype"] != "success" {
		p.t.Fatalf("got response %v, want success for %q", r, id)
	}
	inner, _ := r["response"].(map[string]any)
	return inner
}

func TestPermissionAllowed(t *testing.T) {
	h := newFakeHost()
	p := newPeer(t, h)
	p.send(goldenCanUse)
	got := p.response("f1d8")
	want := map[string]any{"behavior": "allow", "updatedInput": map[string]any{"command": "touch made_by_tool.txt", "description": "Create a file"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	calls := h.Calls()
	if len(calls) != 1 {
		t.Fatalf("got %d Permit calls, want 1", len(calls))
	}
	c := calls[0]
	if c.Kind != "shell" || c.Command != "touch made_by_tool.txt" || c.Cwd != "/work/ws" || c.ID != "toolu_f6d2" || c.Tool != "Bash" {
		t.Errorf("got call %+v", c)
	}
}

func TestPermissionDenied(t *testing.T) {
	h := newFakeHost()
	h.Permits["Bash"] = engines.Permission{Reason: "Commands that write need the person's approval in Ask mode."}
	p := newPeer(t, h)
	p.send(goldenCanUse)
	got := p.response("f1d8")
	want := map[string]any{"behavior": "deny", "message": "Commands that write need the person's approval in Ask mode."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestAskUserQuestion(t *testing.T) {
	h := newFakeHost()
	h.Answers["Which database?"] = engines.Answer{Option: 1, Text: "SQLite"}
	h.Answers["Anything else?"] = engines.Answer{Option: -1, Text: "Keep it small."}
	p := newPeer(t, h)
	p.send(`{"type":"control_request","request_id":"q1","request":{"subtype":"can_use_tool","tool_name":"AskUserQuestion","input":{"questions":[` +
		`{"question":"Which database?","header":"DB","multiSelect":false,"options":[{"label":"Postgres (Recommended)","description":"big"},{"label":"SQLite","description":"small"}]},` +
		`{"question":"Anything else?","header":"More","multiSelect":false,"options":[{"label":"No","description":""}]}]},"tool_use_id":"toolu_q"}}`)
	got := p.response("q1")
	if got["behavior"] != "allow" {
		t.Fatalf("got %v, want allow", got)
	}
	in := got["updatedInput"].(map[string]any)
	wantAnswers := map[string]any{"Which database?": "SQLite", "Anything else?": "Keep it small."}
	if !reflect.DeepEqual(in["answers"], wantAnswers) {
		t.Errorf("got answers %v, want %v", in["answers"], wantAnswers)
	}
	if _, ok := in["questions"]; !ok {
		t.Error("updatedInput lost the questions")
	}
	qs := h.Questions()
	if len(qs) != 2 {
		t.Fatalf("got %d questions, want 2", len(qs))
	}
	if qs[0].Text != "Which database?" || !reflect.DeepEqual(qs[0].Options, []string{"Postgres", "SQLite"}) || qs[0].Recommended != 0 || !qs[0].FreeText {
		t.Errorf("got question %+v", qs[0])
	}
	if len(h.Calls()) != 0 {
		t.Errorf("a question went to Permit: %+v", h.Calls())
	}
}

func TestHookCallbacks(t *testing.T) {
	p := newPeer(t, newFakeHost())
	p.send(goldenHook)
	if got := p.response("d6a0"); !reflect.DeepEqual(got, map[string]any{"continue": true}) {
		t.Errorf("got %v, want {continue:true}", got)
	}
	p.send(`{"type":"control_request","request_id":"d6a1","request":{"subtype":"hook_callback","callback_id":"` + judgeHookID + `","input":{},"tool_use_id":"toolu_1"}}`)
	got := p.response("d6a1")
	out, _ := got["hookSpecificOutput"].(map[string]any)
	if got["continue"] != true || out["permissionDecision"] != "ask" {
		t.Errorf("got %v, want continue and permissionDecision ask", got)
	}
}

func TestInitializeRegistersJudgeHook(t *testing.T) {
	p := newPeer(t, newFakeHost())
	type reply struct {
		body json.RawMessage
		err  error
	}
	done := make(chan reply, 1)
	go func() {
		b, err := p.conn.request(context.Background(), p.sess.initialize())
		done <- reply{b, err}
	}()
	m := p.read()
	if m["type"] != "control_request" {
		t.Fatalf("got %v", m)
	}
	req := m["request"].(map[string]any)
	hooks, _ := req["hooks"].(map[string]any)
	if req["subtype"] != "initialize" || hooks["PreToolUse"] == nil {
		t.Fatalf("got request %v, want initialize with a PreToolUse hook", req)
	}
	id := m["request_id"].(string)
	p.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + id + `","response":{"commands":[],"models":[],"account":{"apiKeySource":"ANTHROPIC_API_KEY"},"pid":13116}}}`)
	r := <-done
	if r.err != nil || !strings.Contains(string(r.body), `"pid":13116`) {
		t.Errorf("got %s, %v", r.body, r.err)
	}
}

func TestEventsFromTranscript(t *testing.T) {
	h := newFakeHost()
	p := newPeer(t, h)
	ended := make(chan struct{})
	p.sess.ended = func() { close(ended) }
	p.send(goldenInit, goldenToolUse, goldenResult, goldenThinking, goldenInit, goldenEnd)
	<-ended
	type ev struct {
		Kind          engines.EventKind
		Text, Tool    string
		ToolID, Out   string
		Failed        bool
		Session, Mdl  string
		Input, Tokens string
	}
	var got []ev
	for _, e := range h.Events() {
		x := ev{Kind: e.Kind, Text: e.Text, Tool: e.Tool, ToolID: e.ToolID, Out: e.Output, Failed: e.Failed, Session: e.Session, Mdl: e.Model, Input: string(e.Input)}
		if e.Usage != nil {
			b, _ := json.Marshal(e.Usage)
			x.Tokens = string(b)
		}
		if e.At.IsZero() {
			t.Errorf("event %s has no time", e.Kind)
		}
		got = append(got, x)
	}
	want := []ev{
		{Kind: engines.EventStarted, Session: "8d74c0de-1111-2222-3333-444444444444", Mdl: "claude-opus-4-8[1m]"},
		{Kind: engines.EventToolStart, Tool: "Bash", ToolID: "toolu_5d2f", Input: `{"command":"ls","description":"List files"}`},
		{Kind: engines.EventToolEnd, Tool: "Bash", ToolID: "toolu_5d2f", Out: "a.txt"},
		{Kind: engines.EventThinking, Text: "The folder holds a.txt."},
		{Kind: engines.EventMessage, Text: "FAKE_FINAL: done. tool output starts: a.txt"},
		{Kind: engines.EventUsage, Tokens: `{"inputTokens":120,"outputTokens":42,"cacheRead":30,"cacheWrite":7,"costUsd":0.00035}`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n got %+v\nwant %+v", got, want)
	}
	res, err := p.sess.outcome(false)
	if err != nil {
		t.Fatal(err)
	}
	wantRes := engines.Result{SessionID: "8d74c0de-1111-2222-3333-444444444444", Summary: "FAKE_FINAL: done. tool output starts: a.txt", Turns: 2,
		Usage: engines.Usage{InputTokens: 120, OutputTokens: 42, CacheRead: 30, CacheWrite: 7, CostUSD: 0.00035}}
	if res != wantRes {
		t.Errorf("got %+v, want %+v", res, wantRes)
	}
}

func TestFailedToolResult(t *testing.T) {
	h := newFakeHost()
	p := newPeer(t, h)
	p.send(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":[{"type":"text","text":"denied by probe"}],"is_error":true}]},"parent_tool_use_id":null,"session_id":"s","tool_use_result":"Error: denied by probe"}`)
	h.WaitFor(t, "tool_end", func() bool { return len(h.EventsOf(engines.EventToolEnd)) == 1 })
	e := h.EventsOf(engines.EventToolEnd)[0]
	if !e.Failed || e.Output != "denied by probe" {
		t.Errorf("got %+v", e)
	}
}

func TestMalformedLines(t *testing.T) {
	h := newFakeHost()
	p := newPeer(t, h)
	p.send(`this is not json`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"never-sent","response":{}}}`,
		`{"type":"brand_new_kind"}`,
		`{"type":"control_request","request_id":"m1","request":{"subtype":"mcp_message","server_name":"x","message":{}}}`,
		goldenInit)
	m := p.read() // the unknown control request is answered with an error
	r := m["response"].(map[string]any)
	if r["subtype"] != "error" || r["request_id"] != "m1" {
		t.Errorf("got %v, want an error response to m1", m)
	}
	h.WaitFor(t, "started after the bad lines", func() bool { return len(h.EventsOf(engines.EventStarted)) == 1 })
	if n := len(h.EventsOf(engines.EventError)); n != 4 {
		t.Errorf("got %d error events, want 4: %+v", n, h.Events())
	}
}

func TestNoConversationFound(t *testing.T) {
	h := newFakeHost()
	p := newPeer(t, h)
	ended := make(chan struct{})
	p.sess.ended = func() { close(ended) }
	p.send(goldenNoSession)
	<-ended
	res, err := p.sess.outcome(false)
	if err != nil || !res.Gone || res.SessionID != "" {
		t.Errorf("got %+v, %v; want Gone and no error", res, err)
	}
	if n := len(h.EventsOf(engines.EventError)); n != 0 {
		t.Errorf("a gone session produced %d error events", n)
	}
}

func TestControlCancelWithdrawsPermit(t *testing.T) {
	h := newFakeHost()
	h.BlockPermit = true
	p := newPeer(t, h)
	p.send(goldenCanUse)
	h.WaitFor(t, "Permit", func() bool { return len(h.Calls()) == 1 })
	p.send(`{"type":"control_cancel_request","request_id":"f1d8"}`, goldenHook)
	// The next line written answers the hook: the withdrawn permission got none.
	m := p.read()
	if r := m["response"].(map[string]any); r["request_id"] != "d6a0" {
		t.Errorf("got %v, want the hook's answer", m)
	}
}

func TestToolCallKinds(t *testing.T) {
	tests := []struct {
		tool, input string
		kind        string
		paths       []string
		url, cmd    string
	}{
		{"Bash", `{"command":"go test ./..."}`, "shell", nil, "", "go test ./..."},
		{"Edit", `{"file_path":"/w/a.go","old_string":"a","new_string":"b"}`, "edit", []string{"/w/a.go"}, "", ""},
		{"Write", `{"file_path":"b.go","content":""}`, "edit", []string{"/w/b.go"}, "", ""},
		{"MultiEdit", `{"file_path":"/w/c.go","edits":[]}`, "edit", []string{"/w/c.go"}, "", ""},
		{"NotebookEdit", `{"notebook_path":"/w/n.ipynb"}`, "edit", []string{"/w/n.ipynb"}, "", ""},
		{"Read", `{"file_path":"/etc/hosts"}`, "read", []string{"/etc/hosts"}, "", ""},
		{"Glob", `{"pattern":"**/*.go"}`, "read", []string{"/w"}, "", ""},
		{"Grep", `{"pattern":"x","path":"sub"}`, "read", []string{"/w/sub"}, "", ""},
		{"LS", `{"path":"/tmp"}`, "read", []string{"/tmp"}, "", ""},
		{"WebFetch", `{"url":"https://example.com","prompt":"p"}`, "fetch", nil, "https://example.com", ""},
		{"WebSearch", `{"query":"q"}`, "web_search", nil, "", ""},
		{"mcp__ensemble__ask_person", `{}`, "mcp", nil, "", ""},
		{"TodoWrite", `{}`, "", nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			c := toolCall("id", tt.tool, json.RawMessage(tt.input), "/w")
			if c.Kind != tt.kind || !reflect.DeepEqual(c.Paths, tt.paths) || c.URL != tt.url || c.Command != tt.cmd {
				t.Errorf("got kind %q paths %v url %q command %q; want %q %v %q %q", c.Kind, c.Paths, c.URL, c.Command, tt.kind, tt.paths, tt.url, tt.cmd)
			}
		})
	}
}
