package assistant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/httpin"
	"github.com/ensemblework/ensemble/runtime/loopback"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// planTurn is one turn on a plan while its agent runs: the engines.Host the agent's driver talks to,
// and the MCP server through which the agent calls the turn's tools.
type planTurn struct {
	s      *Service
	convID string
	policy string
	plan   aiPlan
	prep   *turnPrep
	tc     *tools.ToolContext
	emit   func(Event)
	secret string
	srv    *mcp.Server
	http   http.Handler

	callMu sync.Mutex // serialises tool calls, so writes land in the order the agent made them

	mu      sync.Mutex // guards the following
	rows    []ToolRow
	calls   int
	offered []string // what the MCP server lists now
	texts   []string // the agent's messages, whole
	delta   bool     // the message being streamed has arrived as deltas
	usage   models.Usage
}

// newPlanTurn makes the turn's server and remembers its secret until dropPlanTurn.
func (s *Service) newPlanTurn(ctx context.Context, convID, policy string, p aiPlan, prep *turnPrep, emit func(Event)) *planTurn {
	var b [32]byte
	rand.Read(b[:])
	pt := &planTurn{s: s, convID: convID, policy: policy, plan: p, prep: prep, tc: s.toolContext(ctx, convID, prep.agent), emit: emit,
		secret: "ens_turn_" + hex.EncodeToString(b[:]), rows: []ToolRow{}}
	pt.srv = mcp.NewServer(&mcp.Implementation{Name: "ensemble", Title: "Ensemble", Version: "1"}, nil)
	pt.list()
	pt.http = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return pt.srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: 5 * time.Minute})
	s.mu.Lock()
	if s.planTurns == nil {
		s.planTurns = map[string]*planTurn{}
	}
	s.planTurns[hashSecret(pt.secret)] = pt
	s.mu.Unlock()
	return pt
}

func (s *Service) dropPlanTurn(pt *planTurn) {
	s.mu.Lock()
	delete(s.planTurns, hashSecret(pt.secret))
	s.mu.Unlock()
}

func hashSecret(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// PlanMCP serves the MCP servers of the turns running on a plan (Streamable HTTP). Each turn has
// its own secret, which is all a request needs to say which turn it calls for; without the secret
// of a turn that is running, or from off this computer, it gets 401.
func (s *Service) PlanMCP() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, ok := httpin.Bearer(r.Header)
		s.mu.Lock()
		pt := s.planTurns[hashSecret(secret)]
		s.mu.Unlock()
		if !ok || pt == nil || !loopback.Host(r.RemoteAddr) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"This is an assistant turn's own MCP server; it answers only the agent running that turn, while it runs."}` + "\n"))
			return
		}
		pt.http.ServeHTTP(w, r)
	})
}

// list puts the tools the turn shows the model on the server; adding one tells the agent the list
// changed (hub_how_to loads a playbook's tools mid-turn).
func (pt *planTurn) list() {
	for _, t := range pt.s.outbound(models.Request{Tools: pt.prep.tools(pt.s.cfg.Tools)}).Tools {
		if contains(pt.offered, t.Name) {
			continue
		}
		pt.offered = append(pt.offered, t.Name)
		tool := pt.s.cfg.Tools.Get(t.Name)
		pt.srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Schema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: tool != nil && !tool.IsWrite}}, pt.handle)
	}
}

// handle runs one call from the agent, as a model-key turn runs one from the model.
func (pt *planTurn) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	pt.callMu.Lock()
	defer pt.callMu.Unlock()
	pt.mu.Lock()
	n := pt.calls
	if n < MaxPlanCalls {
		pt.calls++
	}
	pt.mu.Unlock()
	if n >= MaxPlanCalls {
		return pt.result(models.ToolResult{Name: req.Params.Name, IsError: true,
			Content: fmt.Sprintf("This turn has made %d tool calls, the most one turn may; answer the person with what you have.", MaxPlanCalls)}), nil
	}
	raw := req.Params.Arguments
	c := models.ToolCall{ID: fmt.Sprintf("plan_%d", n+1), Name: req.Params.Name, Input: raw}
	// A call of a tool the server does not list is refused like any unknown tool.
	row, content, isErr := pt.s.call(ctx, pt.tc, pt.convID, pt.offered, pt.policy, c, pt.emit)
	pt.prep.called(pt.s.cfg.Tools, row, c, isErr)
	pt.mu.Lock()
	pt.rows = append(pt.rows, row)
	pt.mu.Unlock()
	pt.list() // under callMu: offered changes only here
	return pt.result(models.ToolResult{CallID: c.ID, Name: c.Name, Content: content, IsError: isErr}), nil
}

// result is a tool's result as the agent gets it: as it would go out in a model request.
func (pt *planTurn) result(r models.ToolResult) *mcp.CallToolResult {
	out := pt.s.outbound(models.Request{Messages: []models.Message{{Role: "user", ToolResults: []models.ToolResult{r}}}})
	r = out.Messages[0].ToolResults[0]
	return &mcp.CallToolResult{IsError: r.IsError, Content: []mcp.Content{&mcp.TextContent{Text: r.Content}}}
}

// run starts the agent on the turn, resuming session; a session the agent no longer has is started
// again with the conversation so far. msgs are the conversation, the person's new message last.
func (pt *planTurn) run(ctx context.Context, d engines.Driver, spec engines.Spec, session string, msgs []models.Message) (engines.Result, error) {
	history, text := msgs[:len(msgs)-1], msgs[len(msgs)-1].Text
	spec.Resume, spec.Prompt = session, text
	if session == "" {
		spec.Prompt = transcript(history) + text
	}
	res, err := pt.once(ctx, d, spec)
	if res.Gone && session != "" && ctx.Err() == nil {
		pt.s.cfg.Log.Info("assistant: the plan's session is gone; starting a new one", "conversation", pt.convID)
		spec.Resume, spec.Prompt = "", transcript(history)+text
		return pt.once(ctx, d, spec)
	}
	return res, err
}

func (pt *planTurn) once(ctx context.Context, d engines.Driver, spec engines.Spec) (engines.Result, error) {
	r, err := d.Start(ctx, spec, pt)
	if err != nil {
		return engines.Result{}, err
	}
	res, err := r.Wait()
	if err != nil && ctx.Err() != nil {
		err = context.Cause(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			err = ctx.Err()
		}
	}
	return res, err
}

// reply is the finished turn as the person sees it: the agent's last message is the answer.
func (pt *planTurn) reply(res engines.Result) Reply {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	r := Reply{ConversationID: pt.convID, Tools: pt.rows, Steps: res.Turns,
		Usage: models.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens}}
	if n := len(pt.texts); n > 0 {
		r.Text = pt.texts[n-1]
	}
	if strings.TrimSpace(res.Summary) != "" {
		r.Text = res.Summary
	}
	return r
}

// Permit lets the agent call Ensemble's tools and nothing of its own.
func (pt *planTurn) Permit(_ context.Context, c engines.ToolCall) (engines.Permission, error) {
	if c.Tool == "mcp__"+engines.OwnServer || strings.HasPrefix(c.Tool, "mcp__"+engines.OwnServer+"__") {
		return engines.Permission{Allow: true}, nil
	}
	return engines.Permission{Reason: fmt.Sprintf("In a chat with Ensemble's assistant, %s has only Ensemble's tools; its own (%s) are off.", pt.plan.title, c.Tool)}, nil
}

// Ask refuses: a chat's questions go in the reply.
func (pt *planTurn) Ask(context.Context, engines.Question) (engines.Answer, error) {
	return engines.Answer{}, errors.New("In a chat with Ensemble's assistant, put the question to the person in your reply.")
}

// Event streams the agent's text to the person.
func (pt *planTurn) Event(ev engines.Event) {
	switch ev.Kind {
	case engines.EventDelta:
		pt.mu.Lock()
		first := !pt.delta
		pt.delta = true
		sep := first && len(pt.texts) > 0
		pt.mu.Unlock()
		if sep {
			pt.emit(Event{Type: EventText, Text: "\n\n"})
		}
		pt.emit(Event{Type: EventText, Text: ev.Text})
	case engines.EventMessage:
		pt.mu.Lock()
		streamed := pt.delta
		pt.delta = false
		sep := !streamed && len(pt.texts) > 0
		pt.texts = append(pt.texts, ev.Text)
		pt.mu.Unlock()
		if !streamed {
			if sep {
				pt.emit(Event{Type: EventText, Text: "\n\n"})
			}
			pt.emit(Event{Type: EventText, Text: ev.Text})
		}
	}
}
