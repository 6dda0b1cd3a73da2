package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/ensemblework/ensemble/engines"
)

// client is Ensemble's side of one ACP connection: it turns session/update into events, puts
// session/request_permission to the judge and elicitation/create to the person.
type client struct {
	p      Profile
	folder string
	host   engines.Host
	log    *slog.Logger
	// chat: the run is an assistant's chat turn, whose text also streams as deltas.
	chat bool
	// runCtx ends when the run is stopped: it withdraws open questions.
	runCtx context.Context

	mu       sync.Mutex
	session  string
	loading  bool      // session/load replays history as updates; they are not this run's events
	heard    time.Time // when the last update came
	tools    map[string]*tool
	order    []string // tool ids in the order they started
	msg      strings.Builder
	msgID    string
	thought  strings.Builder
	last     string // the last message the agent finished
	refused  []refusal
	usage    engines.Usage
	costSeen bool
	window   int // the context window the agent last reported, in tokens (0: none yet)
}

type refusal struct {
	call   engines.ToolCall
	reason string
}

var (
	_ acpsdk.Client = (*client)(nil)
	_ interface {
		UnstableCreateElicitation(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error)
		UnstableCompleteElicitation(context.Context, acpsdk.UnstableCompleteElicitationNotification) error
	} = (*client)(nil)
)

func newClient(ctx context.Context, p Profile, spec engines.Spec, host engines.Host, log *slog.Logger) *client {
	return &client{p: p, folder: spec.Folder, chat: spec.Chat, host: host, log: log, runCtx: ctx, tools: map[string]*tool{}}
}

func (c *client) event(ev engines.Event) {
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	c.host.Event(ev)
}

// protocolError records something the agent sent that is not valid, or that it never should send.
func (c *client) protocolError(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	c.log.Warn("acp: "+text, "agent", c.p.Name)
	c.event(engines.Event{Kind: engines.EventError, Text: text})
}

// SessionUpdate turns the agent's updates into events. Updates come in order (the SDK queues
// notifications and a response waits for those read before it).
func (c *client) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.heard = time.Now()
	if c.loading {
		return nil
	}
	if c.session != "" && string(n.SessionId) != c.session {
		c.protocolError("%s sent an update for session %q, not this run's %q", c.p.Title, n.SessionId, c.session)
		return nil
	}
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil:
		c.flushThoughtLocked()
		id := ""
		if u.AgentMessageChunk.MessageId != nil {
			id = *u.AgentMessageChunk.MessageId
		}
		if id != c.msgID && c.msg.Len() > 0 {
			c.flushMessageLocked()
		}
		c.msgID = id
		text := blockText(u.AgentMessageChunk.Content)
		c.msg.WriteString(text)
		if c.chat && text != "" {
			c.event(engines.Event{Kind: engines.EventDelta, Text: text})
		}
	case u.AgentThoughtChunk != nil:
		c.flushMessageLocked()
		c.thought.WriteString(blockText(u.AgentThoughtChunk.Content))
	case u.ToolCall != nil:
		c.flushLocked()
		tc := u.ToolCall
		t := c.toolLocked(string(tc.ToolCallId))
		t.merge(&tc.Title, &tc.Kind, &tc.Status, tc.RawInput, tc.RawOutput, tc.Locations, tc.Content)
		if !emptyRaw(tc.RawInput) {
			t.shown = tc.RawInput
		}
		c.progressLocked(t)
	case u.ToolCallUpdate != nil:
		c.flushLocked()
		tu := u.ToolCallUpdate
		t := c.toolLocked(string(tu.ToolCallId))
		t.merge(tu.Title, tu.Kind, tu.Status, tu.RawInput, tu.RawOutput, tu.Locations, tu.Content)
		if !emptyRaw(tu.RawInput) {
			t.shown = tu.RawInput
		}
		c.progressLocked(t)
	case u.UsageUpdate != nil:
		uu := u.UsageUpdate
		costed := false
		if cost := uu.Cost; cost != nil && strings.EqualFold(cost.Currency, "USD") {
			c.usage.CostUSD = cost.Amount
			c.costSeen, costed = true, true
		}
		// The window is the one the agent says it has; recorded when it first says so or it changes.
		resized := uu.Size > 0 && uu.Size != c.window
		if resized {
			c.window = uu.Size
		}
		if costed || resized {
			us := c.usage
			c.event(engines.Event{Kind: engines.EventUsage, Usage: &us, ContextTokens: c.window})
		}
		c.log.Debug("acp: context", "agent", c.p.Name, "used", uu.Used, "size", uu.Size)
	case u.UserMessageChunk != nil, u.Plan != nil, u.AvailableCommandsUpdate != nil, u.CurrentModeUpdate != nil,
		u.ConfigOptionUpdate != nil, u.SessionInfoUpdate != nil:
		// Not part of the run's record.
	default:
		c.log.Debug("acp: unknown session update", "agent", c.p.Name)
	}
	return nil
}

func (c *client) toolLocked(id string) *tool {
	t := c.tools[id]
	if t == nil {
		t = &tool{id: id}
		c.tools[id] = t
	}
	return t
}

// progressLocked sends tool_start the first time a call is seen, and tool_end when it finishes.
func (c *client) progressLocked(t *tool) {
	if !t.seen {
		t.seen = true
		c.order = append(c.order, t.id)
	}
	if !t.started && !t.awaitsCommand() {
		t.started = true
		c.event(engines.Event{Kind: engines.EventToolStart, Tool: t.name(), ToolID: t.id, Input: t.input()})
	}
	if t.started && !t.ended && t.done() {
		t.ended = true
		c.event(engines.Event{Kind: engines.EventToolEnd, Tool: t.name(), ToolID: t.id, Output: t.output(),
			Failed: t.status == acpsdk.ToolCallStatusFailed})
	}
}

func (c *client) flushLocked() {
	c.flushThoughtLocked()
	c.flushMessageLocked()
}

func (c *client) flushMessageLocked() {
	if c.msg.Len() == 0 {
		return
	}
	text := c.msg.String()
	c.msg.Reset()
	c.event(engines.Event{Kind: engines.EventMessage, Text: text})
	// Copilot's note on a refused call is not the agent's reply.
	if t := strings.TrimSpace(text); t != "" && !strings.EqualFold(strings.Trim(t, ". "), "Operation cancelled by user") {
		c.last = t
	}
}

func (c *client) flushThoughtLocked() {
	if c.thought.Len() == 0 {
		return
	}
	c.event(engines.Event{Kind: engines.EventThinking, Text: c.thought.String()})
	c.thought.Reset()
}

// endTurn flushes what the turn left: its last message and thinking, and the tool calls the agent
// never finished (ended as failed).
func (c *client) endTurn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked()
	c.msgID = ""
	for _, id := range c.order {
		if t := c.tools[id]; !t.ended {
			if !t.started {
				t.started = true
				c.event(engines.Event{Kind: engines.EventToolStart, Tool: t.name(), ToolID: t.id, Input: t.input()})
			}
			t.ended = true
			c.event(engines.Event{Kind: engines.EventToolEnd, Tool: t.name(), ToolID: t.id, Failed: true,
				Output: "The turn ended before the call finished."})
		}
	}
}

func blockText(b acpsdk.ContentBlock) string {
	switch {
	case b.Text != nil:
		return b.Text.Text
	case b.ResourceLink != nil:
		return b.ResourceLink.Uri
	}
	return ""
}

// RequestPermission puts the call to the judge and answers allow-once or reject-once, never an
// "always" option: that would change the person's own allowlist in the agent and hide later calls
// from the judge.
func (c *client) RequestPermission(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	cancelled := acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}
	c.mu.Lock()
	if c.session != "" && string(req.SessionId) != c.session {
		c.mu.Unlock()
		c.protocolError("%s asked permission for session %q, not this run's %q", c.p.Title, req.SessionId, c.session)
		return cancelled, nil
	}
	tc := req.ToolCall
	t := c.toolLocked(string(tc.ToolCallId))
	t.merge(tc.Title, tc.Kind, nil, tc.RawInput, nil, tc.Locations, tc.Content)
	call := t.call(c.folder)
	c.mu.Unlock()

	allowOnce, rejectOnce := option(req.Options, acpsdk.PermissionOptionKindAllowOnce), option(req.Options, acpsdk.PermissionOptionKindRejectOnce)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(c.runCtx, stop)()
	perm, err := c.host.Permit(ctx, call)
	if err != nil {
		c.log.Debug("acp: permission withdrawn", "agent", c.p.Name, "tool", call.Tool, "err", err)
		return cancelled, nil
	}
	if perm.Allow {
		if allowOnce == "" {
			c.protocolError("%s offered no allow-once option for %s; the call was cancelled (Ensemble never chooses an \"always\" option)", c.p.Title, describe(call))
			return cancelled, nil
		}
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeSelected(allowOnce)}, nil
	}
	reason := perm.Reason
	if reason == "" {
		reason = "Ensemble's rules do not allow it."
	}
	c.mu.Lock()
	c.refused = append(c.refused, refusal{call: call, reason: reason})
	c.mu.Unlock()
	if rejectOnce == "" {
		return cancelled, nil
	}
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeSelected(rejectOnce)}, nil
}

func option(opts []acpsdk.PermissionOption, kind acpsdk.PermissionOptionKind) acpsdk.PermissionOptionId {
	for _, o := range opts {
		if o.Kind == kind {
			return o.OptionId
		}
	}
	return ""
}

// takeRefusals returns the calls refused since the last call, and forgets them.
func (c *client) takeRefusals() []refusal {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.refused
	c.refused = nil
	return r
}

// refusalPrompt is the next message after a turn in which calls were refused.
func refusalPrompt(rs []refusal) string {
	var b strings.Builder
	b.WriteString("Ensemble refused these tool calls:\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "- %s: %s\n", describe(r.call), r.reason)
	}
	b.WriteString("Continue the task another way within the rules, or finish and say what is left.")
	return b.String()
}

// The file and terminal methods are not offered (clientCapabilities fs and terminal are off):
// the agents read and write themselves and ask permission first. An agent that calls them anyway
// gets an error.

func (c *client) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return acpsdk.ReadTextFileResponse{}, c.notOffered(acpsdk.ClientMethodFsReadTextFile)
}

func (c *client) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, c.notOffered(acpsdk.ClientMethodFsWriteTextFile)
}

func (c *client) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, c.notOffered(acpsdk.ClientMethodTerminalCreate)
}

func (c *client) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, c.notOffered(acpsdk.ClientMethodTerminalKill)
}

func (c *client) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, c.notOffered(acpsdk.ClientMethodTerminalOutput)
}

func (c *client) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, c.notOffered(acpsdk.ClientMethodTerminalRelease)
}

func (c *client) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, c.notOffered(acpsdk.ClientMethodTerminalWaitForExit)
}

func (c *client) notOffered(method string) error {
	c.protocolError("%s called %s, which Ensemble does not offer", c.p.Title, method)
	return acpsdk.NewMethodNotFound(method)
}

// UnstableCompleteElicitation ends a URL elicitation; Ensemble declines those, so there is nothing
// to close.
func (c *client) UnstableCompleteElicitation(context.Context, acpsdk.UnstableCompleteElicitationNotification) error {
	return nil
}

// statusErr is an ACP error's code, or 0.
func statusErr(err error) (*acpsdk.RequestError, bool) {
	re, ok := err.(*acpsdk.RequestError)
	return re, ok
}

// streamBroke reports whether a prompt's error is the agent's JavaScript runtime saying the
// connection to its model broke while the reply came: Node's fetch (undici) fails the read with
// "terminated" or "other side closed", Bun with "The socket connection was closed unexpectedly" or,
// when the reset lands at another moment, "Connection reset by server". The agents retry such a
// reply themselves first; this is the error they give up with.
func streamBroke(err error) bool {
	re, ok := statusErr(err)
	if !ok {
		return false
	}
	msg := strings.ToLower(strings.TrimSpace(re.Message))
	if msg == "terminated" || strings.HasSuffix(msg, ": terminated") {
		return true
	}
	for _, s := range brokenConnection {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// brokenConnection are the phrases Node, undici and Bun use for a connection that closed or was
// reset under a request.
var brokenConnection = []string{
	"socket connection was closed unexpectedly", "connection reset", "econnreset",
	"other side closed", "socket hang up", "premature close",
}

// authRequired reports whether err is the agent saying it has no sign-in.
func authRequired(err error) bool {
	if re, ok := statusErr(err); ok {
		if re.Code == -32000 {
			return true
		}
		msg := strings.ToLower(re.Message)
		if b, err := json.Marshal(re.Data); err == nil {
			msg += " " + strings.ToLower(string(b))
		}
		return strings.Contains(msg, "auth") || strings.Contains(msg, "sign in") || strings.Contains(msg, "login")
	}
	return false
}
