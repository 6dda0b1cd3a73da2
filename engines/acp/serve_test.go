package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/sandbox"
)

// fakeHost records events and answers Permit and Ask from tables.
type fakeHost struct {
	mu      sync.Mutex
	allow   func(engines.ToolCall) engines.Permission
	answer  func(engines.Question) engines.Answer
	calls   []engines.ToolCall
	qs      []engines.Question
	events  []engines.Event
	blockCh chan struct{} // when set, Permit waits for ctx
}

func (h *fakeHost) Permit(ctx context.Context, c engines.ToolCall) (engines.Permission, error) {
	h.mu.Lock()
	h.calls = append(h.calls, c)
	allow, block := h.allow, h.blockCh
	h.mu.Unlock()
	if block != nil {
		close(block)
		<-ctx.Done()
		return engines.Permission{}, ctx.Err()
	}
	if allow == nil {
		return engines.Permission{Allow: true}, nil
	}
	return allow(c), nil
}

func (h *fakeHost) Ask(ctx context.Context, q engines.Question) (engines.Answer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.qs = append(h.qs, q)
	if h.answer == nil {
		return engines.Answer{Option: -1, Text: "free"}, nil
	}
	return h.answer(q), nil
}

func (h *fakeHost) Event(ev engines.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
}

func (h *fakeHost) of(k engines.EventKind) []engines.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []engines.Event
	for _, e := range h.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// fakeAgent is a stand-in ACP agent written with the SDK's agent side. Each prompt runs turn.
type fakeAgent struct {
	conn    *acpsdk.AgentSideConnection
	load    func(acpsdk.LoadSessionRequest) error
	turn    func(ctx context.Context, a *fakeAgent, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error)
	mu      sync.Mutex
	prompts []string
	answers []acpsdk.RequestPermissionResponse
	mcp     []acpsdk.McpServer
	cancels int
}

var (
	_ acpsdk.Agent       = (*fakeAgent)(nil)
	_ acpsdk.AgentLoader = (*fakeAgent)(nil)
)

func (a *fakeAgent) Authenticate(context.Context, acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, nil
}

func (a *fakeAgent) Initialize(context.Context, acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	return acpsdk.InitializeResponse{ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentCapabilities: acpsdk.AgentCapabilities{LoadSession: a.load != nil, McpCapabilities: acpsdk.McpCapabilities{Http: true}},
		AuthMethods:       []acpsdk.AuthMethod{}}, nil
}

func (a *fakeAgent) Cancel(context.Context, acpsdk.CancelNotification) error {
	a.mu.Lock()
	a.cancels++
	a.mu.Unlock()
	return nil
}

func (a *fakeAgent) cancelCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cancels
}

func (a *fakeAgent) CloseSession(context.Context, acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	return acpsdk.CloseSessionResponse{}, nil
}

func (a *fakeAgent) ListSessions(context.Context, acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	return acpsdk.ListSessionsResponse{}, nil
}

func (a *fakeAgent) NewSession(_ context.Context, r acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	a.mu.Lock()
	a.mcp = r.McpServers
	a.mu.Unlock()
	return acpsdk.NewSessionResponse{SessionId: "s1"}, nil
}

func (a *fakeAgent) LoadSession(_ context.Context, r acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	return acpsdk.LoadSessionResponse{}, a.load(r)
}

func (a *fakeAgent) Prompt(ctx context.Context, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	a.mu.Lock()
	a.prompts = append(a.prompts, p.Prompt[0].Text.Text)
	a.mu.Unlock()
	return a.turn(ctx, a, p)
}

func (a *fakeAgent) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	return acpsdk.ResumeSessionResponse{}, nil
}

func (a *fakeAgent) SetSessionConfigOption(context.Context, acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	return acpsdk.SetSessionConfigOptionResponse{}, nil
}

func (a *fakeAgent) SetSessionMode(context.Context, acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	return acpsdk.SetSessionModeResponse{}, nil
}

func (a *fakeAgent) update(ctx context.Context, sid acpsdk.SessionId, u acpsdk.SessionUpdate) {
	_ = a.conn.SessionUpdate(ctx, acpsdk.SessionNotification{SessionId: sid, Update: u})
}

// ask sends a shell command's permission request with every kind of option, "always" first.
func (a *fakeAgent) ask(ctx context.Context, sid acpsdk.SessionId, id, cmd string) acpsdk.RequestPermissionResponse {
	resp, err := a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{SessionId: sid,
		ToolCall: acpsdk.ToolCallUpdate{ToolCallId: acpsdk.ToolCallId(id), Title: acpsdk.Ptr(cmd), Kind: acpsdk.Ptr(acpsdk.ToolKindExecute),
			RawInput: map[string]any{"command": cmd}},
		Options: []acpsdk.PermissionOption{
			{OptionId: "always", Kind: acpsdk.PermissionOptionKindAllowAlways, Name: "Always"},
			{OptionId: "once", Kind: acpsdk.PermissionOptionKindAllowOnce, Name: "Once"},
			{OptionId: "never", Kind: acpsdk.PermissionOptionKindRejectAlways, Name: "Never"},
			{OptionId: "reject", Kind: acpsdk.PermissionOptionKindRejectOnce, Name: "Reject"},
		}})
	if err != nil {
		return acpsdk.RequestPermissionResponse{}
	}
	a.mu.Lock()
	a.answers = append(a.answers, resp)
	a.mu.Unlock()
	return resp
}

var testProfile = Profile{Name: "fake", Title: "Fake Agent", Login: "fake login", Sandbox: never}

// serveFake runs Serve against agent over pipes.
func serveFake(t *testing.T, ctx context.Context, agent *fakeAgent, spec engines.Spec, host *fakeHost) (engines.Result, error) {
	t.Helper()
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	agent.conn = acpsdk.NewAgentSideConnection(agent, fromAgentW, toAgentR)
	agent.conn.SetLogger(slog.New(slog.DiscardHandler))
	if spec.Folder == "" {
		spec.Folder = t.TempDir()
	}
	res, err := Serve(ctx, testProfile, spec, host, toAgentW, fromAgentR, nil)
	toAgentW.Close()
	fromAgentW.Close()
	return res, err
}

func TestPermissionOnceNeverAlways(t *testing.T) {
	host := &fakeHost{allow: func(c engines.ToolCall) engines.Permission {
		if c.Command == "rm -rf x" {
			return engines.Permission{Reason: "Deleting is off."}
		}
		return engines.Permission{Allow: true}
	}}
	agent := &fakeAgent{turn: func(ctx context.Context, a *fakeAgent, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
		if strings.HasPrefix(p.Prompt[0].Text.Text, "Ensemble refused") {
			a.update(ctx, p.SessionId, acpsdk.UpdateAgentMessageText("ok, not deleting"))
			return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
		}
		a.update(ctx, p.SessionId, acpsdk.StartToolCall("t1", "ls", acpsdk.WithStartKind(acpsdk.ToolKindExecute), acpsdk.WithStartRawInput(map[string]any{"command": "ls"})))
		a.ask(ctx, p.SessionId, "t1", "ls")
		a.update(ctx, p.SessionId, acpsdk.UpdateToolCall("t1", acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusCompleted),
			acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("a.txt"))})))
		a.ask(ctx, p.SessionId, "t2", "rm -rf x")
		a.update(ctx, p.SessionId, acpsdk.UpdateAgentThoughtText("hmm"))
		a.update(ctx, p.SessionId, acpsdk.UpdateAgentMessageText("part one, "))
		a.update(ctx, p.SessionId, acpsdk.UpdateAgentMessageText("part two"))
		u := 12
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn, Usage: &acpsdk.Usage{InputTokens: 10, OutputTokens: 5, CachedReadTokens: &u}}, nil
	}}
	res, err := serveFake(t, context.Background(), agent, engines.Spec{Prompt: "go", MCP: engines.MCPServer{Name: "ensemble", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "Bearer x"}}}, host)
	if err != nil {
		t.Fatal(err)
	}
	var chosen []string
	for _, a := range agent.answers {
		chosen = append(chosen, string(a.Outcome.Selected.OptionId))
	}
	if strings.Join(chosen, ",") != "once,reject" {
		t.Errorf("chose %v, want once then reject (never an always option)", chosen)
	}
	if len(agent.prompts) != 2 || !strings.Contains(agent.prompts[1], "`rm -rf x`: Deleting is off.") || !strings.Contains(agent.prompts[1], "Continue the task another way") {
		t.Errorf("prompts %q", agent.prompts)
	}
	if res.Summary != "ok, not deleting" || res.SessionID != "s1" || res.Turns != 2 || res.Usage.InputTokens != 10 || res.Usage.CacheRead != 12 {
		t.Errorf("result %+v", res)
	}
	if len(host.calls) != 2 || host.calls[0].Kind != "shell" || host.calls[0].Command != "ls" {
		t.Errorf("calls %+v", host.calls)
	}
	if m := host.of(engines.EventMessage); len(m) != 2 || m[0].Text != "part one, part two" {
		t.Errorf("messages %+v", m)
	}
	if th := host.of(engines.EventThinking); len(th) != 1 || th[0].Text != "hmm" {
		t.Errorf("thinking %+v", th)
	}
	ends := host.of(engines.EventToolEnd)
	if starts := host.of(engines.EventToolStart); len(starts) != 1 || len(ends) != 1 || ends[0].Output != "a.txt" || ends[0].Failed {
		t.Errorf("starts %+v ends %+v", starts, ends)
	}
	if len(host.of(engines.EventStarted)) != 1 || len(host.of(engines.EventUsage)) == 0 || len(host.of(engines.EventError)) != 0 {
		t.Errorf("events %+v", host.events)
	}
	if len(agent.mcp) != 1 || agent.mcp[0].Http == nil || agent.mcp[0].Http.Url != "http://127.0.0.1:1/mcp" || agent.mcp[0].Http.Headers[0].Value != "Bearer x" {
		t.Errorf("mcp servers %+v", agent.mcp)
	}
}

func TestRefusalFollowUpsCapped(t *testing.T) {
	host := &fakeHost{allow: func(engines.ToolCall) engines.Permission { return engines.Permission{Reason: "no"} }}
	agent := &fakeAgent{turn: func(ctx context.Context, a *fakeAgent, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
		a.ask(ctx, p.SessionId, "t", "make")
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
	}}
	res, err := serveFake(t, context.Background(), agent, engines.Spec{Prompt: "go"}, host)
	if err != nil {
		t.Fatal(err)
	}
	if len(agent.prompts) != 1+RefusalFollowUps || res.Turns != 1+RefusalFollowUps {
		t.Errorf("%d prompts, %d turns; want 1 + %d follow-ups", len(agent.prompts), res.Turns, RefusalFollowUps)
	}
}

func TestElicitation(t *testing.T) {
	host := &fakeHost{answer: func(q engines.Question) engines.Answer { return engines.Answer{Option: 1, Text: "Blue"} }}
	var got []acpsdk.UnstableCreateElicitationResponse
	agent := &fakeAgent{turn: func(ctx context.Context, a *fakeAgent, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
		for _, props := range []map[string]any{
			{"color": map[string]any{"type": "string", "title": "Color", "enum": []any{"red", "blue"}}},
			{"pw": map[string]any{"type": "string", "title": "Your password"}},
		} {
			req := acpsdk.NewUnstableCreateElicitationRequestForm(acpsdk.UnstableElicitationSchema{Properties: props})
			req.Form.Message = "Pick one"
			resp, err := a.conn.UnstableCreateElicitation(ctx, req)
			if err != nil {
				t.Errorf("elicitation: %v", err)
			}
			got = append(got, resp)
		}
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
	}}
	if _, err := serveFake(t, context.Background(), agent, engines.Spec{Prompt: "go"}, host); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Accept == nil || got[0].Accept.Content["color"] != "blue" || got[1].Decline == nil {
		b, _ := json.Marshal(got)
		t.Errorf("responses %s", b)
	}
	if len(host.qs) != 1 || len(host.qs[0].Options) != 2 || host.qs[0].Text != "Pick one" {
		t.Errorf("questions %+v (the password field must not be asked)", host.qs)
	}
}

func TestLoadRefusedIsGone(t *testing.T) {
	agent := &fakeAgent{load: func(acpsdk.LoadSessionRequest) error { return acpsdk.NewInvalidParams("no such session") },
		turn: func(context.Context, *fakeAgent, acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
			t.Error("prompted after a refused load")
			return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
		}}
	res, err := serveFake(t, context.Background(), agent, engines.Spec{Prompt: "go", Resume: "old"}, &fakeHost{})
	if err != nil || !res.Gone {
		t.Errorf("got %+v, %v; want Gone", res, err)
	}
}

func TestLoadReplayIsNotEvents(t *testing.T) {
	agent := &fakeAgent{}
	agent.load = func(r acpsdk.LoadSessionRequest) error {
		agent.update(context.Background(), r.SessionId, acpsdk.UpdateAgentMessageText("old reply"))
		return nil
	}
	agent.turn = func(ctx context.Context, a *fakeAgent, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
		a.update(ctx, p.SessionId, acpsdk.UpdateAgentMessageText("new reply"))
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
	}
	host := &fakeHost{}
	res, err := serveFake(t, context.Background(), agent, engines.Spec{Prompt: "go", Resume: "old"}, host)
	if err != nil || res.Gone || res.SessionID != "old" || res.Summary != "new reply" {
		t.Errorf("got %+v, %v", res, err)
	}
	if m := host.of(engines.EventMessage); len(m) != 1 {
		t.Errorf("messages %+v; the replay must not be recorded", m)
	}
}

func TestBadMessageIsErrorEvent(t *testing.T) {
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	host := &fakeHost{}
	done := make(chan error, 1)
	go func() {
		_, err := Serve(context.Background(), testProfile, engines.Spec{Folder: t.TempDir(), Prompt: "go"}, host, toAgentW, fromAgentR, nil)
		done <- err
	}()
	// A hand-written agent: garbage first, then a terminal/create it was never offered, then EOF.
	go io.Copy(io.Discard, toAgentR)
	io.WriteString(fromAgentW, "this is not json\n")
	io.WriteString(fromAgentW, `{"jsonrpc":"2.0","id":7,"method":"terminal/create","params":{"sessionId":"s","command":"ls"}}`+"\n")
	io.WriteString(fromAgentW, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":42}}}`+"\n")
	time.Sleep(200 * time.Millisecond)
	fromAgentW.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Serve ended without an error when the agent went away during initialize")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not end")
	}
	if n := len(host.of(engines.EventError)); n < 2 {
		t.Errorf("%d error events, want one for the line that is not JSON and one for terminal/create: %+v", n, host.events)
	}
}

func TestStopCancelsTurn(t *testing.T) {
	host := &fakeHost{blockCh: make(chan struct{})}
	agent := &fakeAgent{turn: func(ctx context.Context, a *fakeAgent, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
		resp := a.ask(ctx, p.SessionId, "t", "sleep 100")
		// session/cancel may end this prompt's ctx (and so the wait for the answer) before the
		// driver's "cancelled" arrives; an answer that did arrive must be cancelled.
		if resp.Outcome.Cancelled == nil && ctx.Err() == nil {
			t.Errorf("a withdrawn permission answered %+v, want cancelled", resp)
		}
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-host.blockCh; cancel() }()
	_, err := serveFake(t, ctx, agent, engines.Spec{Prompt: "go"}, host)
	if !errors.Is(err, engines.ErrStopped) {
		t.Errorf("got %v, want ErrStopped", err)
	}
	for i := 0; i < 100 && agent.cancelCount() == 0; i++ {
		time.Sleep(20 * time.Millisecond) // the notification may land after the prompt's answer
	}
	if agent.cancelCount() != 1 {
		t.Errorf("%d session/cancel, want 1", agent.cancelCount())
	}
}

// TestSandboxChoice: an agent with a sandbox of its own here uses it; any other runs inside
// Ensemble's; where the one it needs cannot run, the run does not start and says what to do.
func TestSandboxChoice(t *testing.T) {
	look := func(have ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			if slices.Contains(have, n) {
				return "/usr/bin/" + n, nil
			}
			return "", errors.New("not found")
		}
	}
	linux := sandbox.System{GOOS: "linux", Look: look("bwrap"), Try: func(context.Context, string) error { return nil },
		Sysctl: func(string) string { return "" }, Exists: func(string) bool { return true }}
	bare := linux
	bare.Look = look()
	mac := sandbox.System{GOOS: "darwin", Look: look("sandbox-exec")}
	windows := sandbox.System{GOOS: "windows"}
	cases := []struct {
		agent string
		sys   sandbox.System
		on    bool
		by    string // the receipt's sandbox; "" with the sandbox off
		err   string
	}{
		{"opencode", linux, false, "", ""},
		{"opencode", linux, true, "ensemble", ""},
		{"opencode", mac, true, "ensemble", ""},
		{"opencode", bare, true, "", "Ensemble's sandbox for OpenCode, which has no OS sandbox of its own here, needs bwrap, which this computer does not have: install bubblewrap"},
		{"opencode", windows, true, "", "does not run on Windows itself"},
		{"grok", linux, true, "ensemble", ""},
		{"kimi", linux, true, "ensemble", ""},
		{"vibe", linux, true, "ensemble", ""},
		{"gemini", linux, true, "ensemble", ""},
		{"gemini", mac, true, "ensemble", ""},
		{"qwen", linux, true, "ensemble", ""},
		{"qwen", mac, true, "ensemble", ""},
		{"cursor", linux, true, "cursor", ""},
		{"cursor", windows, true, "cursor", ""},
		{"copilot", linux, true, "ensemble", ""},
		{"copilot", bare, true, "", "Ensemble's sandbox for GitHub Copilot, which has no OS sandbox of its own here, needs bwrap"},
		{"copilot", mac, true, "ensemble", ""},
		{"copilot", windows, true, "", "does not run on Windows itself"},
	}
	for _, c := range cases {
		p, ok := ProfileNamed(c.agent)
		if !ok {
			t.Fatalf("no profile %q", c.agent)
		}
		d := New(p, WithSystem(c.sys))
		conf, err := d.confinement(context.Background(), engines.Spec{Sandbox: engines.Sandbox{On: c.on}})
		name := fmt.Sprintf("%s on %s, sandbox %v", c.agent, c.sys.GOOS, c.on)
		if c.err != "" {
			if err == nil || !errors.Is(err, engines.ErrNoSandbox) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: got %v, want the sentence %q", name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if conf.receipt.By != c.by || conf.ours != (c.by == "ensemble") || conf.own != (c.by != "" && c.by != "ensemble") || conf.receipt.Note == "" {
			t.Errorf("%s: got %+v, want it confined by %q", name, conf, c.by)
		}
	}
}

func TestToolCallReading(t *testing.T) {
	edit := &tool{id: "e", title: "Edit a.go", kind: acpsdk.ToolKindEdit, locations: []acpsdk.ToolCallLocation{{Path: "/w/a.go"}},
		content: []acpsdk.ToolCallContent{acpsdk.ToolDiffContent("/w/b.go", "x")}}
	if c := edit.call("/w"); c.Kind != "edit" || strings.Join(c.Paths, ",") != "/w/a.go,/w/b.go" {
		t.Errorf("edit %+v", c)
	}
	argv := &tool{kind: acpsdk.ToolKindExecute, rawInput: map[string]any{"command": []any{"/bin/bash", "-lc", "touch x"}}}
	if c := argv.call("/w"); c.Command != "touch x" || c.Kind != "shell" {
		t.Errorf("argv %+v", c)
	}
	mcp := &tool{kind: acpsdk.ToolKindOther, title: "ensemble: ask_person"}
	if c := mcp.call("/w"); c.Kind != "mcp" || c.Tool != "mcp__ensemble__ask_person" {
		t.Errorf("mcp %+v", c)
	}
	gemini := &tool{kind: acpsdk.ToolKindOther, title: "hub_create_tasks (ensemble MCP Server)"}
	if c := gemini.call("/w"); c.Kind != "mcp" || c.Tool != "mcp__ensemble__hub_create_tasks" {
		t.Errorf("Gemini's mcp %+v", c)
	}
	// A permission request handled before the tool_call that gives the kind.
	early := &tool{title: "`rm a.txt`", rawInput: map[string]any{"command": "rm a.txt", "description": "Delete"}}
	if c := early.call("/w"); c.Kind != "shell" || c.Command != "rm a.txt" || c.Tool != "execute" {
		t.Errorf("early %+v", c)
	}
	title := &tool{kind: acpsdk.ToolKindExecute, title: "Run `git status`"}
	if c := title.call("/w"); c.Command != "git status" {
		t.Errorf("title %+v", c)
	}
}

func TestUsageUpdateWindow(t *testing.T) {
	usd := &acpsdk.Cost{Amount: 0.5, Currency: "USD"}
	for _, tc := range []struct {
		name    string
		updates []acpsdk.SessionUsageUpdate
		want    []int // ContextTokens of each usage event
	}{
		{"a window", []acpsdk.SessionUsageUpdate{{Size: 200_000, Used: 10}}, []int{200_000}},
		{"the same window again is not news", []acpsdk.SessionUsageUpdate{{Size: 200_000}, {Size: 200_000, Used: 50}}, []int{200_000}},
		{"a changed window", []acpsdk.SessionUsageUpdate{{Size: 200_000}, {Size: 1_000_000}}, []int{200_000, 1_000_000}},
		{"cost without a window", []acpsdk.SessionUsageUpdate{{Cost: usd}}, []int{0}},
		{"no window, no cost", []acpsdk.SessionUsageUpdate{{Used: 5}}, nil},
	} {
		h := &fakeHost{}
		c := newClient(context.Background(), Profile{Name: "x", Title: "X"}, engines.Spec{Folder: "/w"}, h, slog.New(slog.DiscardHandler))
		for _, uu := range tc.updates {
			_ = c.SessionUpdate(context.Background(), acpsdk.SessionNotification{SessionId: "s", Update: acpsdk.SessionUpdate{UsageUpdate: &uu}})
		}
		var got []int
		for _, ev := range h.events {
			if ev.Kind == engines.EventUsage {
				got = append(got, ev.ContextTokens)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: windows %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A chat turn's new session gets the instructions leading its first message, a resumed one does
// not, and its text streams as deltas before the whole message; a run's text does not stream.
func TestChatTurn(t *testing.T) {
	reply := func(ctx context.Context, a *fakeAgent, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
		a.update(ctx, p.SessionId, acpsdk.UpdateAgentMessageText("Hel"))
		a.update(ctx, p.SessionId, acpsdk.UpdateAgentMessageText("lo"))
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
	}
	for _, c := range []struct {
		name   string
		spec   engines.Spec
		prompt string
		deltas int
	}{
		{"new", engines.Spec{Chat: true, System: "You are Ensemble's assistant.", Prompt: "hi"}, "You are Ensemble's assistant.\n\n---\n\nhi", 2},
		{"resumed", engines.Spec{Chat: true, System: "You are Ensemble's assistant.", Prompt: "hi", Resume: "old"}, "hi", 2},
		{"run", engines.Spec{System: "ignored", Prompt: "hi"}, "hi", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			agent := &fakeAgent{turn: reply, load: func(acpsdk.LoadSessionRequest) error { return nil }}
			host := &fakeHost{}
			res, err := serveFake(t, context.Background(), agent, c.spec, host)
			if err != nil || res.Summary != "Hello" {
				t.Fatalf("got %+v, %v", res, err)
			}
			if len(agent.prompts) != 1 || agent.prompts[0] != c.prompt {
				t.Errorf("prompts %q, want %q", agent.prompts, c.prompt)
			}
			if d := host.of(engines.EventDelta); len(d) != c.deltas || len(d) == 2 && d[0].Text+d[1].Text != "Hello" {
				t.Errorf("deltas %+v", d)
			}
			if m := host.of(engines.EventMessage); len(m) != 1 || m[0].Text != "Hello" {
				t.Errorf("messages %+v", m)
			}
		})
	}
}
