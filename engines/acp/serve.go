package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/ensemblework/ensemble/engines"
)

// RefusalFollowUps is how many times the calls refused in a turn go back to the agent as the next
// prompt (REFUSAL_FOLLOW_UPS).
const RefusalFollowUps = 6

// cancelGrace is how long a cancelled turn has to end before Serve gives up on it.
var cancelGrace = 3 * time.Second

// setupTimeout bounds initialize, authenticate and session/new or load (MCP servers start first).
var setupTimeout = 2 * time.Minute

// Serve speaks ACP as the client for one run of spec: w is the agent's input, r its output. It
// returns when the run ends. Cancelling ctx stops the run: session/cancel, then [engines.ErrStopped]
// once the turn has ended (or after a grace).
func Serve(ctx context.Context, p Profile, spec engines.Spec, host engines.Host, w io.Writer, r io.Reader, log *slog.Logger) (engines.Result, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := newClient(ctx, p, spec, host, log)
	conn := acpsdk.NewClientSideConnection(c, w, r)
	conn.SetLogger(slog.New(&errorEvents{c: c, next: log.Handler()}))
	s := &serve{c: c, conn: conn, p: p, spec: spec, ctx: ctx}
	return s.run()
}

type serve struct {
	c    *client
	conn *acpsdk.ClientSideConnection
	p    Profile
	spec engines.Spec
	ctx  context.Context
	caps acpsdk.AgentCapabilities
	res  engines.Result
}

func (s *serve) stopped() bool { return s.ctx.Err() != nil }

// call runs one setup request: it ends when the run is stopped or the agent goes away.
func call[T any](s *serve, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(s.ctx, setupTimeout)
	defer cancel()
	v, err := f(ctx)
	if err != nil && s.stopped() {
		return v, engines.ErrStopped
	}
	return v, err
}

func (s *serve) run() (engines.Result, error) {
	p := s.p
	init, err := call(s, func(ctx context.Context) (acpsdk.InitializeResponse, error) {
		return s.conn.Initialize(ctx, acpsdk.InitializeRequest{
			Meta:            p.InitMeta,
			ProtocolVersion: acpsdk.ProtocolVersionNumber,
			ClientInfo:      &acpsdk.Implementation{Name: "ensemble", Title: acpsdk.Ptr("Ensemble"), Version: "1"},
			ClientCapabilities: acpsdk.ClientCapabilities{
				// The agents read and write files themselves, asking first; none is offered
				// Ensemble's file or terminal methods.
				Elicitation: &acpsdk.ElicitationCapabilities{Form: &acpsdk.ElicitationFormCapabilities{}},
			},
		})
	})
	if err != nil {
		return s.res, s.fail("%s did not accept the start of the protocol: %w", p.Title, err)
	}
	s.caps = init.AgentCapabilities
	if init.ProtocolVersion != acpsdk.ProtocolVersionNumber {
		s.c.protocolError("%s speaks ACP version %d; Ensemble speaks %d", p.Title, init.ProtocolVersion, acpsdk.ProtocolVersionNumber)
	}
	if p.AuthMethod != "" && slices.ContainsFunc(init.AuthMethods, func(m acpsdk.AuthMethod) bool { return authID(m) == p.AuthMethod }) {
		if _, err := call(s, func(ctx context.Context) (acpsdk.AuthenticateResponse, error) {
			return s.conn.Authenticate(ctx, acpsdk.AuthenticateRequest{MethodId: p.AuthMethod})
		}); err != nil {
			if errors.Is(err, engines.ErrStopped) {
				return s.res, err
			}
			s.c.log.Info("acp: authenticate failed", "agent", p.Name, "err", err)
			return s.res, p.signedOut()
		}
	}
	mcp, err := s.mcpServers()
	if err != nil {
		return s.res, err
	}

	var opts []acpsdk.SessionConfigOption
	var models *acpsdk.SessionModelState
	var modes *acpsdk.SessionModeState
	if s.spec.Resume != "" {
		if !s.caps.LoadSession {
			s.res.Gone = true
			return s.res, nil
		}
		s.c.mu.Lock()
		s.c.session, s.c.loading = s.spec.Resume, true
		s.c.mu.Unlock()
		resp, err := call(s, func(ctx context.Context) (acpsdk.LoadSessionResponse, error) {
			return s.conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: acpsdk.SessionId(s.spec.Resume), Cwd: s.spec.Folder, McpServers: mcp})
		})
		if err == nil {
			// Gemini CLI goes on replaying the history after its answer to session/load: it
			// is over once the agent has been quiet a moment.
			s.settle()
		}
		s.c.mu.Lock()
		s.c.loading = false
		s.c.mu.Unlock()
		switch {
		case errors.Is(err, engines.ErrStopped):
			return s.res, err
		case err != nil && authRequired(err):
			return s.res, p.signedOut()
		case err != nil:
			s.c.log.Info("acp: session/load refused", "agent", p.Name, "session", s.spec.Resume, "err", err)
			s.res.Gone = true
			return s.res, nil
		}
		s.res.SessionID = s.spec.Resume
		opts, models, modes = resp.ConfigOptions, resp.Models, resp.Modes
	} else {
		resp, err := call(s, func(ctx context.Context) (acpsdk.NewSessionResponse, error) {
			return s.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: s.spec.Folder, McpServers: mcp})
		})
		switch {
		case errors.Is(err, engines.ErrStopped):
			return s.res, err
		case err != nil && authRequired(err):
			return s.res, p.signedOut()
		case err != nil:
			return s.res, s.fail("%s could not start a session: %w", p.Title, err)
		}
		if resp.SessionId == "" {
			return s.res, s.fail("%s started a session without an id", p.Title)
		}
		s.res.SessionID = string(resp.SessionId)
		s.c.mu.Lock()
		s.c.session = s.res.SessionID
		s.c.mu.Unlock()
		opts, models, modes = resp.ConfigOptions, resp.Models, resp.Modes
	}
	model, effort, err := s.configure(opts, models, modes)
	if err != nil {
		return s.res, err
	}
	s.c.event(engines.Event{Kind: engines.EventStarted, Session: s.res.SessionID, Model: model, Effort: effort})

	prompt := s.firstPrompt()
	for followUps := 0; ; followUps++ {
		if err := s.prompt(prompt); err != nil {
			return s.res, err
		}
		refused := s.c.takeRefusals()
		if len(refused) == 0 || followUps >= RefusalFollowUps {
			break
		}
		prompt = refusalPrompt(refused)
	}
	s.c.mu.Lock()
	s.res.Summary = s.c.last
	s.res.Usage = s.c.usage
	s.c.mu.Unlock()
	return s.res, nil
}

// firstPrompt is the run's first message. A chat turn's new session gets Ensemble's instructions
// leading it: an ACP agent takes no system prompt from the client, and its session keeps the
// message, so a resumed session (session/load) is not sent them again (spec 003 §8).
func (s *serve) firstPrompt() string {
	if !s.spec.Chat || s.spec.System == "" || s.spec.Resume != "" {
		return s.spec.Prompt
	}
	return s.spec.System + "\n\n---\n\n" + s.spec.Prompt
}

// replayQuiet is how long an agent sends no update before a loaded session's replay counts as
// over; replayWait bounds the wait.
var replayQuiet, replayWait = 300 * time.Millisecond, 3 * time.Second

// settle waits until the agent has sent no update for replayQuiet (at most replayWait).
func (s *serve) settle() {
	start := time.Now()
	for time.Since(start) < replayWait && !s.stopped() {
		s.c.mu.Lock()
		quiet := time.Since(s.c.heard)
		s.c.mu.Unlock()
		if quiet >= replayQuiet {
			return
		}
		time.Sleep(replayQuiet - quiet)
	}
}

func authID(m acpsdk.AuthMethod) string {
	switch {
	case m.Agent != nil:
		return string(m.Agent.Id)
	case m.EnvVar != nil:
		return string(m.EnvVar.Id)
	case m.Terminal != nil:
		return string(m.Terminal.Id)
	}
	return ""
}

func (s *serve) fail(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if s.stopped() {
		return engines.ErrStopped
	}
	return err
}

// mcpServers is the run's MCP server as session/new takes it.
func (s *serve) mcpServers() ([]acpsdk.McpServer, error) {
	m := s.spec.MCP
	if s.p.MCPFile || (m.URL == "" && m.Command == "") {
		return []acpsdk.McpServer{}, nil
	}
	name := m.ServerName()
	if m.URL != "" {
		if !s.caps.McpCapabilities.Http {
			return nil, fmt.Errorf("%s does not take HTTP MCP servers, so it cannot reach Ensemble's tools (ask_person, report_result); update it and try again", s.p.Title)
		}
		headers := []acpsdk.HttpHeader{}
		for _, k := range slices.Sorted(maps.Keys(m.Headers)) {
			headers = append(headers, acpsdk.HttpHeader{Name: k, Value: m.Headers[k]})
		}
		return []acpsdk.McpServer{{Http: &acpsdk.McpServerHttpInline{Type: "http", Name: name, Url: m.URL, Headers: headers}}}, nil
	}
	env := []acpsdk.EnvVariable{}
	for _, k := range slices.Sorted(maps.Keys(m.Env)) {
		env = append(env, acpsdk.EnvVariable{Name: k, Value: m.Env[k]})
	}
	args := m.Args
	if args == nil {
		args = []string{}
	}
	return []acpsdk.McpServer{{Stdio: &acpsdk.McpServerStdio{Name: name, Command: m.Command, Args: args, Env: env}}}, nil
}

// prompt sends one prompt and waits for its turn to end.
func (s *serve) prompt(text string) error {
	type result struct {
		resp acpsdk.PromptResponse
		err  error
	}
	done := make(chan result, 1)
	s.res.Turns++
	go func() {
		resp, err := s.conn.Prompt(context.Background(), acpsdk.PromptRequest{
			SessionId: acpsdk.SessionId(s.res.SessionID), Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)},
		})
		done <- result{resp, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-s.ctx.Done():
		cctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
		_ = s.conn.Cancel(cctx, acpsdk.CancelNotification{SessionId: acpsdk.SessionId(s.res.SessionID)})
		select {
		case res = <-done:
		case <-cctx.Done():
		}
		cancel()
		s.c.endTurn()
		return engines.ErrStopped
	}
	s.c.endTurn()
	if res.err != nil {
		if authRequired(res.err) {
			return s.p.signedOut()
		}
		if streamBroke(res.err) {
			s.c.mu.Lock()
			s.res.CutOff, s.res.Summary = true, s.c.last // what arrived of the reply that broke off
			s.c.mu.Unlock()
		}
		return s.fail("%s: %w", s.p.Title, res.err)
	}
	s.addUsage(res.resp)
	if res.resp.StopReason == acpsdk.StopReasonCancelled && s.stopped() {
		return engines.ErrStopped
	}
	return nil
}

// addUsage adds a turn's tokens: the prompt result's usage, or Gemini CLI's _meta.quota.
func (s *serve) addUsage(resp acpsdk.PromptResponse) {
	var u engines.Usage
	if us := resp.Usage; us != nil {
		u.InputTokens, u.OutputTokens = int64(us.InputTokens), int64(us.OutputTokens)
		if us.CachedReadTokens != nil {
			u.CacheRead = int64(*us.CachedReadTokens)
		}
		if us.CachedWriteTokens != nil {
			u.CacheWrite = int64(*us.CachedWriteTokens)
		}
	} else if q, ok := resp.Meta["quota"].(map[string]any); ok {
		if tc, ok := q["token_count"].(map[string]any); ok {
			in, _ := tc["input_tokens"].(float64)
			out, _ := tc["output_tokens"].(float64)
			u.InputTokens, u.OutputTokens = int64(in), int64(out)
		}
	}
	if u == (engines.Usage{}) {
		return
	}
	s.c.mu.Lock()
	s.c.usage.InputTokens += u.InputTokens
	s.c.usage.OutputTokens += u.OutputTokens
	s.c.usage.CacheRead += u.CacheRead
	s.c.usage.CacheWrite += u.CacheWrite
	total := s.c.usage
	s.c.mu.Unlock()
	s.c.event(engines.Event{Kind: engines.EventUsage, Usage: &total})
}

// errorEvents turns the SDK's error logs (a line that is not JSON, an update it cannot decode)
// into error events, and passes every record on.
type errorEvents struct {
	c     *client
	next  slog.Handler
	attrs []slog.Attr
}

func (h *errorEvents) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || h.next.Enabled(ctx, l)
}

func (h *errorEvents) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		text := r.Message
		add := func(a slog.Attr) bool {
			if a.Key == "err" || a.Key == "method" {
				text += "; " + a.Key + ": " + a.Value.String()
			}
			return true
		}
		for _, a := range h.attrs {
			add(a)
		}
		r.Attrs(add)
		h.c.protocolError("%s sent a message Ensemble could not read: %s", h.c.p.Title, text)
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *errorEvents) WithAttrs(as []slog.Attr) slog.Handler {
	return &errorEvents{c: h.c, next: h.next.WithAttrs(as), attrs: append(slices.Clip(h.attrs), as...)}
}

func (h *errorEvents) WithGroup(name string) slog.Handler {
	return &errorEvents{c: h.c, next: h.next.WithGroup(name), attrs: h.attrs}
}
