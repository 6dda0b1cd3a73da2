package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// Lines as codex 0.171.0 app-server sent them (agent-clis.md §4), trimmed.
const (
	goldenCmdStarted  = `{"method":"item/started","params":{"item":{"type":"commandExecution","id":"call_ab9d","command":"/bin/bash -lc 'touch made_by_tool.txt'","cwd":"/work/ws","source":"agent","status":"inProgress","commandActions":[{"type":"unknown","command":"touch made_by_tool.txt"}],"aggregatedOutput":null,"exitCode":null},"threadId":"01a22bb5","turnId":"01a22bb5-a2be"}}`
	goldenCmdApproval = `{"method":"item/commandExecution/requestApproval","id":0,"params":{"kind":"command","threadId":"01a22bb5","turnId":"01a22bb5-a2be","itemId":"call_ab9d","startedAtMs":1764000000000,"environmentId":"local","command":"/bin/bash -lc 'touch made_by_tool.txt'","cwd":"/work/ws","commandActions":[{"type":"unknown","command":"touch made_by_tool.txt"}],"proposedExecpolicyAmendment":["touch","made_by_tool.txt"],"availableDecisions":["accept",{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["touch","made_by_tool.txt"]}},"cancel"]}}`
	goldenCmdDone     = `{"method":"item/completed","params":{"item":{"type":"commandExecution","id":"call_ab9d","command":"/bin/bash -lc 'touch made_by_tool.txt'","cwd":"/work/ws","processId":"19544","source":"unifiedExecStartup","status":"completed","exitCode":0,"durationMs":0,"aggregatedOutput":"","commandActions":[]},"threadId":"01a22bb5","turnId":"01a22bb5-a2be"}}`
	goldenCmdFailed   = `{"method":"item/completed","params":{"item":{"type":"commandExecution","id":"call_x","command":"/bin/bash -lc ls","cwd":"/work/ws","status":"failed","exitCode":2,"aggregatedOutput":"ls: cannot access\n","commandActions":[]},"threadId":"01a22bb5","turnId":"01a22bb5-a2be"}}`
	goldenPatchStart  = `{"method":"item/started","params":{"item":{"type":"fileChange","id":"call_p1","changes":[{"path":"/work/ws/patched.txt","kind":{"type":"add"},"diff":"patched by fake model\n"}],"status":"inProgress"},"threadId":"01a22bb5","turnId":"01a22bb5-a2be"}}`
	goldenPatchAsk    = `{"method":"item/fileChange/requestApproval","id":1,"params":{"threadId":"01a22bb5","turnId":"01a22bb5-a2be","itemId":"call_p1","startedAtMs":1764000000000,"reason":null,"grantRoot":null}}`
	goldenMessage     = `{"method":"item/completed","params":{"item":{"type":"agentMessage","id":"msg_1","text":"FAKE_FINAL: done.","phase":null},"threadId":"01a22bb5","turnId":"01a22bb5-a2be","emittedAtMs":1764000000001}}`
	goldenReasoning   = `{"method":"item/completed","params":{"item":{"type":"reasoning","id":"rs_1","summary":["Looking at the files."],"content":[]},"threadId":"01a22bb5","turnId":"01a22bb5-a2be"}}`
	goldenUsage       = `{"method":"thread/tokenUsage/updated","params":{"threadId":"01a22bb5","turnId":"01a22bb5-a2be","tokenUsage":{"total":{"totalTokens":15,"inputTokens":12,"cachedInputTokens":4,"outputTokens":3,"reasoningOutputTokens":0},"last":{"totalTokens":15,"inputTokens":12,"cachedInputTokens":4,"outputTokens":3,"reasoningOutputTokens":0},"modelContextWindow":258400}}}`
	goldenError       = `{"method":"error","params":{"threadId":"01a22bb5","turnId":"01a22bb5-a2be","willRetry":false,"error":{"message":"stream disconnected before completion","codexErrorInfo":null}}}`
	goldenTurnDone    = `{"method":"turn/completed","params":{"threadId":"01a22bb5","turn":{"id":"01a22bb5-a2be","items":[],"itemsView":"summary","status":"completed","error":null,"durationMs":274}}}`
	goldenStatus      = `{"method":"thread/status/changed","params":{"threadId":"01a22bb5","status":{"type":"active","activeFlags":["waitingOnApproval"]}}}`
)

// peer is the Codex side of a conn over io.Pipe: it writes lines to the
// driver and reads what the driver writes.
type peer struct {
	t    *testing.T
	sess *session
	conn *conn
	host *fakeHost
	out  *io.PipeWriter // peer → driver
	in   *bufio.Scanner // driver → peer
	// steered is what the driver sent the running turn.
	steered chan string
}

func newPeer(t *testing.T) *peer {
	t.Helper()
	h := newFakeHost()
	s := newSession(h, "/work/ws", testLogger(t))
	driverR, peerW := io.Pipe()
	peerR, driverW := io.Pipe()
	c := newConn(driverW, s)
	p := &peer{t: t, sess: s, conn: c, host: h, out: peerW, in: bufio.NewScanner(peerR), steered: make(chan string, 4)}
	s.steer = func(ctx context.Context, text string) error { p.steered <- text; return nil }
	go func() { _ = c.serve(context.Background(), driverR) }()
	t.Cleanup(func() {
		peerW.Close()
		<-c.done
		peerR.Close()
	})
	return p
}

func (p *peer) send(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(p.out, l+"\n"); err != nil {
			p.t.Fatal(err)
		}
	}
}

// read returns the next line the driver wrote.
func (p *peer) read() map[string]any {
	p.t.Helper()
	got := make(chan string, 1)
	go func() {
		if p.in.Scan() {
			got <- p.in.Text()
		}
		close(got)
	}()
	select {
	case l, ok := <-got:
		if !ok {
			p.t.Fatal("the driver wrote nothing more")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			p.t.Fatalf("the driver wrote a line that is not JSON: %q", l)
		}
		if _, ok := m["jsonrpc"]; ok {
			p.t.Errorf("the driver wrote a jsonrpc member, which Codex does not use: %s", l)
		}
		return m
	case <-time.After(10 * time.Second):
		p.t.Fatal("timed out waiting for the driver to write")
		return nil
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCommandApprovalAccepted(t *testing.T) {
	p := newPeer(t)
	p.send(goldenCmdStarted, goldenStatus, goldenCmdApproval)
	m := p.read()
	if got := jsonOf(m); got != `{"id":0,"result":{"decision":"accept"}}` {
		t.Errorf("answer %s", got)
	}
	calls := p.host.Calls()
	if len(calls) != 1 {
		t.Fatalf("Permit got %+v", calls)
	}
	c := calls[0]
	if c.Kind != "shell" || c.Command != "touch made_by_tool.txt" || c.Cwd != "/work/ws" || c.Tool != "commandExecution" || c.ID != "call_ab9d" {
		t.Errorf("Permit got %+v", c)
	}
	p.send(goldenCmdDone)
	p.host.WaitFor(t, "tool_end", func() bool { return len(p.host.EventsOf(engines.EventToolEnd)) == 1 })
	start, end := p.host.EventsOf(engines.EventToolStart), p.host.EventsOf(engines.EventToolEnd)
	if len(start) != 1 || start[0].ToolID != "call_ab9d" || !strings.Contains(string(start[0].Input), "touch made_by_tool.txt") {
		t.Errorf("tool_start %+v", start)
	}
	if end[0].Failed || end[0].ToolID != "call_ab9d" {
		t.Errorf("tool_end %+v", end)
	}
}

func TestCommandApprovalDeclined(t *testing.T) {
	p := newPeer(t)
	const reason = "Deleting files is off for this run."
	p.host.Permits["commandExecution"] = engines.Permission{Reason: reason}
	p.send(goldenCmdStarted, goldenCmdApproval)
	m := p.read()
	if got := jsonOf(m); got != `{"id":0,"result":{"decision":"decline"}}` {
		t.Errorf("answer %s, want decline (never acceptForSession or cancel)", got)
	}
	select {
	case text := <-p.steered:
		if !strings.Contains(text, reason) || !strings.Contains(text, "touch made_by_tool.txt") {
			t.Errorf("steered %q, want the command and the reason", text)
		}
	default:
		t.Error("the reason was not sent to the turn")
	}
}

func TestPermitWithdrawnWhenResolved(t *testing.T) {
	p := newPeer(t)
	p.host.BlockPermit = true
	p.send(goldenCmdApproval)
	p.host.WaitFor(t, "Permit", func() bool { return len(p.host.Calls()) == 1 })
	// The turn was interrupted: Codex resolves the request itself.
	p.send(`{"method":"serverRequest/resolved","params":{"threadId":"01a22bb5","requestId":0}}`)
	p.send(goldenMessage) // the next thing the driver writes must not be an answer to 0
	p.host.WaitFor(t, "message", func() bool { return len(p.host.EventsOf(engines.EventMessage)) == 1 })
	p.send(`{"id":7,"method":"item/tool/call","params":{}}`)
	if m := p.read(); jsonOf(m["id"]) != "7" {
		t.Errorf("the driver answered %s after the request was resolved", jsonOf(m))
	}
}

func TestFileChangeApproval(t *testing.T) {
	p := newPeer(t)
	p.send(goldenPatchStart, goldenPatchAsk)
	if got := jsonOf(p.read()); got != `{"id":1,"result":{"decision":"accept"}}` {
		t.Errorf("answer %s", got)
	}
	calls := p.host.Calls()
	if len(calls) != 1 || calls[0].Kind != "edit" || len(calls[0].Paths) != 1 || calls[0].Paths[0] != "/work/ws/patched.txt" {
		t.Errorf("Permit got %+v", calls)
	}
	// A change whose files the driver never saw is declined unasked.
	p.send(`{"method":"item/fileChange/requestApproval","id":2,"params":{"threadId":"01a22bb5","turnId":"t","itemId":"call_unseen","startedAtMs":1}}`)
	if got := jsonOf(p.read()); got != `{"id":2,"result":{"decision":"decline"}}` {
		t.Errorf("answer %s", got)
	}
	if n := len(p.host.Calls()); n != 1 {
		t.Errorf("Permit asked %d times", n)
	}
}

func TestEvents(t *testing.T) {
	p := newPeer(t)
	ended := make(chan struct{})
	p.sess.ended = func() { close(ended) }
	p.sess.started("01a22bb5", "gpt-5.5", "")
	p.send(`{"method":"remoteControl/status/changed","params":{"status":"disabled"}}`,
		goldenReasoning, goldenCmdFailed, goldenUsage, goldenError, goldenMessage, goldenTurnDone)
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("turn/completed did not end the turn")
	}
	var kinds []string
	for _, ev := range p.host.Events() {
		kinds = append(kinds, string(ev.Kind))
	}
	if got, want := strings.Join(kinds, " "), "started thinking tool_start tool_end usage error message"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	end := p.host.EventsOf(engines.EventToolEnd)[0]
	if !end.Failed || end.Output != "ls: cannot access\n" {
		t.Errorf("tool_end %+v, want failed with the output", end)
	}
	ue := p.host.EventsOf(engines.EventUsage)[0]
	if u := ue.Usage; u.InputTokens != 12 || u.OutputTokens != 3 || u.CacheRead != 4 {
		t.Errorf("usage %+v", u)
	}
	if ue.ContextTokens != 258400 {
		t.Errorf("context window %d, want modelContextWindow 258400", ue.ContextTokens)
	}
	res, err := p.sess.outcome(false)
	if err != nil || res.Summary != "FAKE_FINAL: done." || res.SessionID != "01a22bb5" || res.Turns != 1 || res.Usage.InputTokens != 12 {
		t.Errorf("outcome %+v, %v", res, err)
	}
}

func TestBadLines(t *testing.T) {
	p := newPeer(t)
	p.send("this is not JSON", `{"id":99,"result":{}}`, `{"foo":1}`)
	p.host.WaitFor(t, "three errors", func() bool { return len(p.host.EventsOf(engines.EventError)) == 3 })
	// A request Codex should never send is refused, and said.
	p.send(`{"id":5,"method":"account/chatgptAuthTokens/refresh","params":{"reason":"unauthorized"}}`)
	m := p.read()
	e, _ := m["error"].(map[string]any)
	if jsonOf(m["id"]) != "5" || e == nil || e["code"] != float64(-32601) {
		t.Errorf("answer %s, want a method-not-found error", jsonOf(m))
	}
	if n := len(p.host.EventsOf(engines.EventError)); n != 4 {
		t.Errorf("%d error events, want 4", n)
	}
}

func TestUserInput(t *testing.T) {
	p := newPeer(t)
	p.host.Answers["Which color?"] = engines.Answer{Option: 1, Text: "Blue"}
	p.send(`{"method":"item/tool/requestUserInput","id":3,"params":{"threadId":"t","turnId":"u","itemId":"i","isBlocking":true,"questions":[` +
		`{"id":"color","header":"Color","question":"Which color?","options":[{"label":"Red","description":"Warm"},{"label":"Blue","description":"Calm"}]},` +
		`{"id":"pw","header":"Password","question":"Your password?","isSecret":true}]}}`)
	if got := jsonOf(p.read()); got != `{"id":3,"result":{"answers":{"color":{"answers":["Blue"]},"pw":{"answers":[]}}}}` {
		t.Errorf("answer %s", got)
	}
	if qs := p.host.Questions(); len(qs) != 1 || len(qs[0].Options) != 2 {
		t.Errorf("Ask got %+v, want only the color", qs)
	}
}

func TestElicitation(t *testing.T) {
	p := newPeer(t)
	p.host.Answers["Deploy where?\n\nTarget"] = engines.Answer{Option: 0, Text: "Staging"}
	p.send(`{"method":"mcpServer/elicitation/request","id":4,"params":{"serverName":"deploy","threadId":"t","mode":"form","message":"Deploy where?",` +
		`"requestedSchema":{"type":"object","properties":{"target":{"type":"string","title":"Target","enum":["staging","prod"],"enumNames":["Staging","Production"]},"confirm":{"type":"boolean","title":"Confirm"}},"required":["target"]}}}`)
	if got := jsonOf(p.read()); got != `{"id":4,"result":{"action":"accept","content":{"confirm":true,"target":"staging"}}}` {
		t.Errorf("answer %s", got)
	}
	// A form asking for a secret is declined without asking.
	p.send(`{"method":"mcpServer/elicitation/request","id":5,"params":{"serverName":"x","threadId":"t","mode":"form","message":"Log in",` +
		`"requestedSchema":{"type":"object","properties":{"user":{"type":"string"},"api_token":{"type":"string","title":"API token"}}}}}`)
	if got := jsonOf(p.read()); got != `{"id":5,"result":{"action":"decline"}}` {
		t.Errorf("answer %s", got)
	}
	if n := len(p.host.Questions()); n != 2 {
		t.Errorf("Ask asked %d questions, want 2", n)
	}
}

func TestOutcome(t *testing.T) {
	s := newSession(newFakeHost(), "/w", testLogger(t))
	if _, err := s.outcome(false); err == nil {
		t.Error("a run without turn/completed succeeded")
	}
	s.fail(errors.New("first"))
	s.fail(errors.New("second"))
	if _, err := s.outcome(false); err == nil || err.Error() != "first" {
		t.Errorf("got %v", err)
	}
	if _, err := s.outcome(true); !errors.Is(err, engines.ErrStopped) {
		t.Errorf("stopped: got %v", err)
	}
	s.markGone()
	if res, err := s.outcome(false); err != nil || !res.Gone {
		t.Errorf("gone: %+v, %v", res, err)
	}
}

func TestUnwrapShell(t *testing.T) {
	for in, want := range map[string]string{
		"/bin/bash -lc 'touch made_by_tool.txt'":     "touch made_by_tool.txt",
		"/bin/bash -lc ls":                           "ls",
		`/bin/zsh -c "echo \"hi\" \$HOME"`:           `echo "hi" $HOME`,
		`bash -lc 'echo '"'"'quoted'"'"' && ls'`:     `echo 'quoted' && ls`,
		"git status":                                 "git status",
		"/bin/bash -lc 'unclosed":                    "/bin/bash -lc 'unclosed",
		"/usr/bin/python3 -c 'print(1)'":             "/usr/bin/python3 -c 'print(1)'",
		"/bin/bash -lc 'echo $$ > /tmp/x; sleep 30'": "echo $$ > /tmp/x; sleep 30",
	} {
		if got := unwrapShell(in); got != want {
			t.Errorf("unwrapShell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestThreadEffort(t *testing.T) {
	for _, tc := range []struct {
		name, reply, asked, want string
	}{
		{"the thread's level", `{"thread":{"id":"t"},"model":"gpt-5.5","reasoningEffort":"high"}`, "", "high"},
		{"the thread has none", `{"thread":{"id":"t"},"model":"gpt-5.5","reasoningEffort":null}`, "", ""},
		{"an older Codex says nothing", `{"thread":{"id":"t"},"model":"gpt-5.5"}`, "", ""},
		{"the turn set its own: not echoed", `{"thread":{"id":"t"},"model":"gpt-5.5","reasoningEffort":"high"}`, "low", ""},
	} {
		var th thread
		if err := json.Unmarshal([]byte(tc.reply), &th); err != nil {
			t.Fatal(err)
		}
		if got := th.effort(engines.Spec{Effort: tc.asked}); got != tc.want {
			t.Errorf("%s: effort %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestThreadParams(t *testing.T) {
	spec := engines.Spec{Folder: "/work/my.repo", Model: "gpt-5.5", Effort: "high", Resume: "01a2", Trusted: true,
		MCP:     engines.MCPServer{URL: "http://127.0.0.1:4321/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}},
		Sandbox: engines.Sandbox{On: true, Write: []string{"/work/my.repo", "/tmp/ensemble-run-1"}, Internet: true}}
	got := jsonOf(threadParams(spec))
	want := `{"approvalPolicy":"untrusted","config":{"mcp_servers.ensemble_run":{"http_headers":{"Authorization":"Bearer s3cret"},"tool_timeout_sec":86400,"url":"http://127.0.0.1:4321/mcp"},"projects":{"/work/my.repo":{"trust_level":"trusted"}}},"cwd":"/work/my.repo","model":"gpt-5.5","sandbox":"workspace-write","threadId":"01a2"}`
	if got != want {
		t.Errorf("thread params\n got %s\nwant %s", got, want)
	}
	if got := jsonOf(turnParams("01a2", spec)); got != `{"effort":"high","input":[{"text":"","text_elements":[],"type":"text"}],"sandboxPolicy":{"excludeSlashTmp":true,"excludeTmpdirEnvVar":true,"networkAccess":true,"type":"workspaceWrite","writableRoots":["/work/my.repo","/tmp/ensemble-run-1"]},"threadId":"01a2"}` {
		t.Errorf("turn params %s", got)
	}
	// Sandbox off is off: no sandbox on the thread or the turn, and Codex still asks first.
	spec.Sandbox = engines.Sandbox{}
	if got := jsonOf(threadParams(spec)); !strings.Contains(got, `"sandbox":"danger-full-access"`) || !strings.Contains(got, `"approvalPolicy":"untrusted"`) {
		t.Errorf("sandbox off: thread params %s", got)
	}
	if got := jsonOf(turnParams("01a2", spec)); !strings.Contains(got, `"sandboxPolicy":{"type":"dangerFullAccess"}`) {
		t.Errorf("sandbox off: turn params %s", got)
	}
	// Internet off: the sandbox has no network.
	spec.Sandbox = engines.Sandbox{On: true, Write: []string{"/work/my.repo"}}
	if got := jsonOf(turnParams("01a2", spec)); !strings.Contains(got, `"networkAccess":false`) {
		t.Errorf("internet off: turn params %s", got)
	}
}

func TestAgentEnv(t *testing.T) {
	home := t.TempDir()
	codexHome := home + "/.codex"
	if err := mkdirWrite(codexHome+"/config.toml", "model_provider = \"mine\"\n[model_providers.mine]\nenv_key = \"OPENAI_API_KEY\"\n"); err != nil {
		t.Fatal(err)
	}
	base := []string{"HOME=/elsewhere", "OPENAI_API_KEY=sk-own-provider", "CODEX_API_KEY=sk-bill", "CODEX_ACCESS_TOKEN=x", "CLAUDECODE=1", "ENSEMBLE_INTERNAL_TOKEN=t", "KEEP=1"}
	env := strings.Join(agentEnv(base, home, "/usr/bin", map[string]string{"EXTRA": "2"}), "\n") + "\n"
	for _, want := range []string{"HOME=" + home + "\n", "OPENAI_API_KEY=sk-own-provider\n", "KEEP=1\n", "EXTRA=2\n", "PATH=/usr/bin\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %q:\n%s", want, env)
		}
	}
	for _, bad := range []string{"CODEX_API_KEY=", "CODEX_ACCESS_TOKEN=", "CLAUDECODE=", "ENSEMBLE_INTERNAL_TOKEN="} {
		if strings.Contains(env, bad) {
			t.Errorf("environment kept %s", bad)
		}
	}
	// Without a provider naming it, the key goes.
	env = strings.Join(agentEnv(base, t.TempDir(), "", nil), "\n")
	if strings.Contains(env, "OPENAI_API_KEY=") {
		t.Error("OPENAI_API_KEY kept without a provider of the person's own")
	}
}

func mkdirWrite(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o600)
}

// A run's environment secrets and git's settings reach Codex's commands through
// shell_environment_policy.set (Codex leaves *KEY*/*TOKEN* names out of what they
// inherit), and Codex's own environment too; without them there is no policy.
func TestThreadParamsCommandEnv(t *testing.T) {
	spec := engines.Spec{Folder: "/work/r", Env: map[string]string{"ENSEMBLE_RUN": "r1"},
		CommandEnv: map[string]string{"STRIPE_API_KEY": "sk_test_value", "GIT_CONFIG_COUNT": "1",
			"GIT_CONFIG_KEY_0": "credential.https://github.com.helper", "GIT_CONFIG_VALUE_0": "!helper"}}
	cfg := threadConfig(spec)
	set, ok := cfg["shell_environment_policy.set"].(map[string]string)
	if !ok {
		t.Fatalf("no shell_environment_policy.set in %s", jsonOf(cfg))
	}
	for _, k := range []string{"STRIPE_API_KEY", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"} {
		if set[k] != spec.CommandEnv[k] {
			t.Errorf("set[%s] = %q, want %q", k, set[k], spec.CommandEnv[k])
		}
	}
	if _, ok := set["ENSEMBLE_RUN"]; ok {
		t.Error("the run's own variables are Codex's, not its commands' to be set again")
	}
	env := strings.Join(agentEnv(nil, t.TempDir(), "/usr/bin", spec.AgentEnv()), "\n") + "\n"
	for _, want := range []string{"STRIPE_API_KEY=sk_test_value\n", "ENSEMBLE_RUN=r1\n", "GIT_CONFIG_COUNT=1\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("Codex's environment lacks %q", want)
		}
	}
	if _, ok := threadConfig(engines.Spec{Folder: "/work/r"})["shell_environment_policy.set"]; ok {
		t.Error("a run without secrets got a shell environment policy")
	}
}
