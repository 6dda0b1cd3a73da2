package assistant

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/models"
)

// standInAgent is a plan's agent for the edge cases: it reaches the turn's MCP server as the real
// CLI would (the real Claude Code is driven in app's TestAssistantOnClaudePlan) and does what act says.
type standInAgent struct {
	act func(ctx context.Context, spec engines.Spec, host engines.Host, tools *mcp.ClientSession) (engines.Result, error)
	// changed hears the server's notifications/tools/list_changed.
	changed chan struct{}

	mu    sync.Mutex
	specs []engines.Spec
}

func (a *standInAgent) Name() string { return "claude" }

func (a *standInAgent) Start(ctx context.Context, spec engines.Spec, host engines.Host) (engines.Run, error) {
	a.mu.Lock()
	a.specs = append(a.specs, spec)
	a.mu.Unlock()
	r := &standInRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		cs, err := connect(ctx, spec.MCP, a.changed)
		if err != nil {
			r.err = err
			return
		}
		defer cs.Close()
		r.res, r.err = a.act(ctx, spec, host, cs)
	}()
	return r, nil
}

func (a *standInAgent) started() []engines.Spec {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]engines.Spec(nil), a.specs...)
}

type standInRun struct {
	done chan struct{}
	res  engines.Result
	err  error
}

func (r *standInRun) Wait() (engines.Result, error)  { <-r.done; return r.res, r.err }
func (r *standInRun) Stop(ctx context.Context) error { return nil }

func connect(ctx context.Context, m engines.MCPServer, changed chan struct{}) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "stand-in", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}})
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m.URL,
		HTTPClient: enginetest.MCPClient(m.Headers)}, nil)
}

// planFixture is a Service whose plan "claude-code" is the stand-in agent.
func planFixture(t *testing.T, agent *standInAgent, timeout time.Duration) *fixture {
	t.Helper()
	f := newFixture(t, "anthropic", timeout)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.svc.cfg.Plans = map[string]engines.Driver{"claude": agent}
	f.svc.cfg.PlanDir = t.TempDir()
	f.svc.cfg.PlanMCPURL = srv.URL + "/mcp/assistant"
	mux.Handle("/mcp/assistant", f.svc.PlanMCP())
	return f
}

func (f *fixture) planTurn(t *testing.T, conv, text, effort string) (Reply, error) {
	t.Helper()
	return f.svc.Turn(context.Background(), TurnRequest{ConversationID: conv, Text: text, Provider: "claude-code", Effort: effort}, nil)
}

func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args any) (string, bool, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError, nil
}

func say(host engines.Host, text string) {
	host.Event(engines.Event{Kind: engines.EventDelta, Text: text})
	host.Event(engines.Event{Kind: engines.EventMessage, Text: text})
}

func TestPlanTurnActsThroughTheTurnsTools(t *testing.T) {
	var refused engines.Permission
	var listed []string
	agent := &standInAgent{act: func(ctx context.Context, spec engines.Spec, host engines.Host, cs *mcp.ClientSession) (engines.Result, error) {
		if spec.Resume != "" {
			say(host, "Still one task.")
			return engines.Result{SessionID: spec.Resume}, nil
		}
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return engines.Result{}, err
		}
		for _, tl := range tools.Tools {
			listed = append(listed, tl.Name)
		}
		refused, _ = host.Permit(ctx, engines.ToolCall{Tool: "Bash", Kind: "shell", Command: "touch x"})
		say(host, "Adding it.")
		if out, isErr, err := callTool(ctx, cs, "hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Water the plants"}}}); err != nil || isErr {
			return engines.Result{}, errors.New("create: " + out)
		}
		if out, isErr, _ := callTool(ctx, cs, "hub_create_tasks", map[string]any{"tasks": "many"}); !isErr || !strings.Contains(out, "not valid") {
			return engines.Result{}, errors.New("bad input answered: " + out)
		}
		if _, _, err := callTool(ctx, cs, "hub_drop_database", map[string]any{}); err == nil {
			return engines.Result{}, errors.New("a tool the turn does not list answered")
		}
		say(host, "Added Water the plants.")
		return engines.Result{SessionID: "sess-1", Turns: 2}, nil
	}}
	f := planFixture(t, agent, time.Minute)
	r, err := f.planTurn(t, "", "add a task: water the plants", "high")
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "Added Water the plants." || len(r.Tools) != 2 || r.Tools[0].Status != "done" || r.Tools[1].Status != "error" {
		t.Fatalf("reply %+v", r)
	}
	if n := f.count(t, "SELECT count(*) FROM tasks WHERE title = 'Water the plants'"); n != 1 {
		t.Fatalf("%d tasks made", n)
	}
	if refused.Allow || !strings.Contains(refused.Reason, "only Ensemble's tools") {
		t.Errorf("the agent's own shell was answered %+v", refused)
	}
	if !contains(listed, "hub_create_tasks") || contains(listed, "Bash") {
		t.Errorf("the turn's server listed %v", listed)
	}
	spec := agent.started()[0]
	if !spec.Chat || !strings.Contains(spec.System, "You are Ensemble's assistant") || spec.Effort != "high" || spec.Model != "" {
		t.Errorf("the agent started with %+v", spec)
	}

	// The next message resumes the agent's session and sends no transcript.
	if r, err = f.planTurn(t, r.ConversationID, "how many?", ""); err != nil || r.Text != "Still one task." {
		t.Fatalf("second turn: %+v, %v", r, err)
	}
	second := agent.started()[1]
	if second.Resume != "sess-1" || strings.Contains(second.Prompt, "Earlier in this conversation") {
		t.Errorf("the second turn started with resume %q, prompt %q", second.Resume, second.Prompt)
	}

	// Without a secret, with a wrong one, and once the turn is over with its own, the server opens nothing.
	for name, auth := range map[string]string{"none": "", "wrong": "Bearer ens_turn_0000", "ended": spec.MCP.Headers["Authorization"]} {
		req, _ := http.NewRequest("POST", f.svc.cfg.PlanMCPURL, strings.NewReader(`{}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: the turn's server answered %d", name, resp.StatusCode)
		}
	}
}

func TestPlanTurnStartsAgainWhenTheSessionIsGone(t *testing.T) {
	agent := &standInAgent{act: func(ctx context.Context, spec engines.Spec, host engines.Host, cs *mcp.ClientSession) (engines.Result, error) {
		if spec.Resume == "old" {
			return engines.Result{Gone: true}, errors.New("no conversation found")
		}
		say(host, "Hello again.")
		return engines.Result{SessionID: "new"}, nil
	}}
	f := planFixture(t, agent, time.Minute)
	r, err := f.planTurn(t, "", "hi", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Writer().Exec("UPDATE assistant_conversations SET plan_session = 'old'"); err != nil {
		t.Fatal(err)
	}
	if r, err = f.planTurn(t, r.ConversationID, "again", ""); err != nil || r.Text != "Hello again." {
		t.Fatalf("%+v, %v", r, err)
	}
	specs := agent.started()
	last := specs[len(specs)-1]
	if last.Resume != "" || !strings.Contains(last.Prompt, "Earlier in this conversation:\n\nThe person: hi\n\nYou: Hello again.") {
		t.Errorf("started again with resume %q, prompt %q", last.Resume, last.Prompt)
	}
}

func TestPlanTurnRefusals(t *testing.T) {
	hang := &standInAgent{act: func(ctx context.Context, spec engines.Spec, host engines.Host, cs *mcp.ClientSession) (engines.Result, error) {
		<-ctx.Done()
		return engines.Result{}, ctx.Err()
	}}
	f := planFixture(t, hang, 300*time.Millisecond)
	if _, err := f.planTurn(t, "", "hi", "huge"); err == nil || !strings.Contains(err.Error(), "Claude Code takes thinking levels low, medium, high, xhigh, max") {
		t.Errorf("an effort the agent does not take: %v", err)
	}
	if n := len(hang.started()); n != 0 {
		t.Fatalf("the agent started %d times for a refused turn", n)
	}
	_, err := f.planTurn(t, "", "hi", "")
	if !models.IsTimeout(err) || !strings.Contains(err.Error(), "Claude Code did not answer within") {
		t.Errorf("an agent past the limit: %v", err)
	}

	f.svc.cfg.PlanReady = func(context.Context, string) error {
		return errors.New("Claude Code is not signed in here; run `claude` to sign in.")
	}
	if _, err := f.planTurn(t, "", "hi", ""); err == nil || !strings.Contains(err.Error(), "run `claude` to sign in") {
		t.Errorf("a signed-out agent: %v", err)
	}
}

// TestPlanTurnListsAPlaybooksTools: hub_how_to loading a playbook adds its tools to the turn's
// server, which tells the agent its list changed, as a model-key turn adds them to the next request.
func TestPlanTurnListsAPlaybooksTools(t *testing.T) {
	names := func(ctx context.Context, cs *mcp.ClientSession) []string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return nil
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	agent := &standInAgent{changed: make(chan struct{}, 1)}
	agent.act = func(ctx context.Context, spec engines.Spec, host engines.Host, cs *mcp.ClientSession) (engines.Result, error) {
		if contains(names(ctx, cs), "hub_list_people") {
			return engines.Result{}, errors.New("the records playbook's tools were listed before it was loaded")
		}
		if out, isErr, err := callTool(ctx, cs, "hub_how_to", map[string]any{"name": "records"}); err != nil || isErr {
			return engines.Result{}, fmt.Errorf("hub_how_to: %s %v", out, err)
		}
		select {
		case <-agent.changed:
		case <-time.After(5 * time.Second):
			return engines.Result{}, errors.New("no notifications/tools/list_changed")
		}
		if !contains(names(ctx, cs), "hub_list_people") {
			return engines.Result{}, errors.New("the records playbook's tools are not listed after it loaded")
		}
		say(host, "Loaded.")
		return engines.Result{SessionID: "s"}, nil
	}
	f := planFixture(t, agent, time.Minute)
	if r, err := f.planTurn(t, "", "hi", ""); err != nil || r.Text != "Loaded." {
		t.Fatalf("%+v, %v", r, err)
	}
}

// TestPlanTurnStops: Stop ends the agent's run and keeps what it said.
func TestPlanTurnStops(t *testing.T) {
	started := make(chan struct{})
	agent := &standInAgent{act: func(ctx context.Context, spec engines.Spec, host engines.Host, cs *mcp.ClientSession) (engines.Result, error) {
		say(host, "Working on it.")
		close(started)
		<-ctx.Done()
		return engines.Result{}, ctx.Err()
	}}
	f := planFixture(t, agent, time.Minute)
	done := make(chan error, 1)
	var conv string
	go func() {
		_, err := f.svc.Turn(context.Background(), TurnRequest{Text: "hi", Provider: "claude-code"}, func(e Event) {
			if e.Type == "conversation" {
				conv = e.ConversationID
			}
		})
		done <- err
	}()
	<-started
	if err := f.svc.Stop(context.Background(), conv); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Fatalf("a stopped plan turn ended with %v", err)
	}
	c, err := f.svc.Conversation(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	if last := c.Messages[len(c.Messages)-1]; !last.Stopped || last.Text != "Working on it." {
		t.Errorf("the stopped turn was saved as %+v", last)
	}
}

func TestPlanSettings(t *testing.T) {
	for _, c := range []struct {
		change SettingsChange
		err    string
	}{
		{SettingsChange{Provider: ptr("claude-code")}, ""},
		{SettingsChange{Provider: ptr("codex"), Effort: ptr("minimal")}, ""},
		{SettingsChange{Provider: ptr("codex"), Effort: ptr("max")}, "Codex takes thinking levels"},
		{SettingsChange{Provider: ptr("opencode"), Effort: ptr("max")}, ""},
		{SettingsChange{Provider: ptr("opencode"), Effort: ptr("ultra")}, "OpenCode takes thinking levels"},
		{SettingsChange{Provider: ptr("gemini-cli")}, ""},
		{SettingsChange{Provider: ptr("gemini-cli"), Effort: ptr("high")}, "Gemini CLI has no thinking level Ensemble can set"},
		{SettingsChange{Provider: ptr("grok-cli")}, "not one of anthropic, openai, ollama, claude-code, codex, opencode or gemini-cli"},
	} {
		_, err := c.change.apply(DefaultSettings())
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", c.change, err, c.err)
		}
	}
}

func ptr[T any](v T) *T { return &v }
