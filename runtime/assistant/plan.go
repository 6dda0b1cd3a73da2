package assistant

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// The person's own AI plan as the assistant's model (spec 003 §8). Instead of a model API with a
// key, the plan's agent CLI (Claude Code, Codex, OpenCode, Gemini CLI) runs the turn on this
// computer with the vendor's own sign-in: Ensemble's instructions replace the agent's, it has none
// of its own tools, and it
// reaches the turn's tools over the turn's own MCP server on loopback, where every call runs through
// the same code as a model-key turn (policy, holds, receipts). One conversation is one agent
// session, resumed from message to message.

// aiPlan is a provider that is an agent's plan.
type aiPlan struct {
	agent   string   // the engines driver's name
	title   string   // the agent as people know it
	efforts []string // what the agent's own thinking setting takes, lowest first; none: no setting
	// fresh: every message starts a new session with the conversation so far, since resuming one
	// is not reliable with this agent.
	fresh bool
}

// aiPlans are the providers that run on the person's plan, by provider id.
var aiPlans = map[string]aiPlan{
	"claude-code": {agent: "claude", title: "Claude Code", efforts: []string{"low", "medium", "high", "xhigh", "max"}},
	"codex":       {agent: "codex", title: "Codex", efforts: []string{"minimal", "low", "medium", "high", "xhigh"}},
	// OpenCode's levels are its model's variants (its Effort option); the names across its
	// providers. One the chosen model does not take is left out of the turn (spec 003 §3.3).
	"opencode": {agent: "opencode", title: "OpenCode", efforts: []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}},
	// Gemini CLI (0.61.0) offers no thought_level option over ACP, so it takes no level. It names a
	// session's file by the minute it was made, and session/load writes a fresh record into the
	// file of that name first: a session loaded within its minute, as a chat's next message often
	// is, loses what it held. So each message starts a session of its own.
	"gemini-cli": {agent: "gemini", title: "Gemini CLI", fresh: true},
}

// Limits of a turn on a plan.
const (
	// MaxPlanCalls is the most tool calls one plan turn runs (spec 003 §8: MAX_COMPUTER_CALLS).
	MaxPlanCalls = 24
	// planMaxTurns bounds the agent's own loop (Claude Code's --max-turns).
	planMaxTurns = 28
)

// planOrder is the order the plans are offered in.
var planOrder = []string{"claude-code", "codex", "opencode", "gemini-cli"}

// Plan is one of the person's plans as a client lists it.
type Plan struct {
	ID      string   `json:"id"`      // the provider id
	Agent   string   `json:"agent"`   // the engines driver that runs it
	Title   string   `json:"title"`   // the agent as people know it
	Efforts []string `json:"efforts"` // the thinking levels its agent takes, lowest first
}

// Plans lists the providers that run on the person's plan, in the order they are offered.
func Plans() []Plan {
	out := make([]Plan, 0, len(planOrder))
	for _, id := range planOrder {
		p := aiPlans[id]
		out = append(out, Plan{ID: id, Agent: p.agent, Title: p.title, Efforts: slices.Clone(p.efforts)})
	}
	return out
}

// IsPlan reports whether provider is one of the person's plans rather than a model API.
func IsPlan(provider string) bool {
	_, ok := aiPlans[provider]
	return ok
}

// checkEffort refuses a level the plan's agent does not take, before the agent starts.
func (p aiPlan) checkEffort(effort string) error {
	if effort == "" || slices.Contains(p.efforts, effort) {
		return nil
	}
	if len(p.efforts) == 0 {
		return fmt.Errorf("%s has no thinking level Ensemble can set; leave it on the agent's own (not %q).", p.title, effort)
	}
	return fmt.Errorf("%s takes thinking levels %s, not %q.", p.title, strings.Join(p.efforts, ", "), effort)
}

// modelName is how a reply names the model: the one chosen, or the agent's default.
func (p aiPlan) modelName(model string) string {
	if model == "" {
		return p.title
	}
	return p.title + " (" + model + ")"
}

// planDriver is the driver that runs p here, or the sentence saying why there is none.
func (s *Service) planDriver(ctx context.Context, p aiPlan) (engines.Driver, error) {
	d := s.cfg.Plans[p.agent]
	if d == nil || s.cfg.PlanDir == "" || s.cfg.PlanMCPURL == "" {
		return nil, problem.Invalid("%s cannot answer the assistant here: this runtime does not run agents.", p.title)
	}
	if s.cfg.PlanReady != nil {
		if err := s.cfg.PlanReady(ctx, p.agent); err != nil {
			return nil, problem.New(problem.KindInvalid, err.Error())
		}
	}
	return d, nil
}

// runPlan answers one turn on a plan: the agent runs with the turn's tools until it answers.
func (s *Service) runPlan(ctx context.Context, p aiPlan, d engines.Driver, convID string, req TurnRequest, policy string, history []models.Message, emit func(Event)) (Reply, error) {
	prep, text := s.begin(ctx, convID, req, emit)
	folder := filepath.Join(s.cfg.PlanDir, convID)
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return Reply{ConversationID: convID, Tools: []ToolRow{}}, fmt.Errorf("The chat's folder could not be made: %w", err)
	}
	session, err := s.planSession(ctx, convID, req.Provider)
	if err != nil {
		return Reply{ConversationID: convID, Tools: []ToolRow{}}, err
	}
	if p.fresh {
		session = ""
	}
	if session != "" {
		text = cutOffPreface(history) + text // the agent's own session holds the cut reply as if whole
	}
	pt := s.newPlanTurn(ctx, convID, policy, p, prep, emit)
	defer s.dropPlanTurn(pt)
	// What the agent is given is a model request's instructions and messages, and goes out the
	// same way; its tools and their results go out through the turn's MCP server (planTurn).
	out := s.outbound(models.Request{System: s.system(policy, prep) + planNote,
		Messages: append(slices.Clip(history), models.Message{Role: "user", Text: text})})
	spec := engines.Spec{
		Folder:   folder,
		Model:    req.Model,
		Effort:   req.Effort,
		MaxTurns: planMaxTurns,
		Chat:     true,
		System:   out.System,
		MCP: engines.MCPServer{Name: engines.OwnServer, URL: s.cfg.PlanMCPURL,
			Headers: map[string]string{"Authorization": "Bearer " + pt.secret}},
	}
	lctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	res, err := pt.run(lctx, d, spec, session, out.Messages)
	switch {
	case err != nil && lctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		err = &models.TimeoutError{Model: p.modelName(req.Model), Limit: s.cfg.Timeout}
	case res.CutOff && lctx.Err() == nil:
		// The agent's own connection to its model broke off: whether the agent failed the run for
		// it or took the part that came as its whole answer, the answer is cut short.
		err = &models.CutOffError{Model: req.Model, Via: p.title, Partial: strings.TrimSpace(pt.reply(res).Text) != ""}
	}
	if res.SessionID != "" {
		if serr := s.keepPlanSession(ctx, convID, req.Provider, res.SessionID); serr != nil {
			s.cfg.Log.Warn("assistant: the plan's session was not kept; the next message starts a new one", "err", serr)
		}
	}
	reply := pt.reply(res)
	if err != nil {
		return reply, planError(p, err)
	}
	if strings.TrimSpace(reply.Text) == "" {
		return reply, fmt.Errorf("%s ended without an answer. Ask again.", p.title)
	}
	reply.Text = prep.reply(reply.Text)
	return reply, nil
}

// cutOffPreface tells a resumed agent session that its last answer was cut off, which its own
// record of the session does not say (the agent may have taken the part that came as the whole
// answer): "" when the last answer was not cut off.
func cutOffPreface(history []models.Message) string {
	n := len(history)
	if n == 0 || history[n-1].Role != "assistant" || !strings.HasSuffix(history[n-1].Text, cutOffNote) {
		return ""
	}
	part := strings.TrimSpace(strings.TrimSuffix(history[n-1].Text, cutOffNote))
	if part == "" {
		return "Your last answer in this conversation was cut off before any of it arrived: the connection to your model broke.\n\n"
	}
	return "Your last answer in this conversation was cut off before it finished: the connection to your model broke, and the person saw only this part of it:\n\n" + part + "\n\n"
}

// planNote tells the agent where its tools are.
const planNote = "\n\nYour tools are Ensemble's, on its MCP server (named ensemble); you have no shell, files or web of your own here."

// planError is the sentence for a plan turn that failed.
func planError(p aiPlan, err error) error {
	switch {
	case models.IsTimeout(err), models.IsCutOff(err), errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, engines.ErrNotInstalled):
		return fmt.Errorf("%s is not installed on this computer; install it, or choose another provider in Settings → Assistant.", p.title)
	case errors.Is(err, engines.ErrSignedOut):
		return fmt.Errorf("%s is not signed in on this computer; sign in to it (Settings → Agents), then ask again.", p.title)
	}
	return &sentenceError{fmt.Sprintf("%s could not answer: %s", p.title, tools.Sentence(err.Error())), err}
}

// transcript is the conversation so far, for an agent session that has not seen it.
func transcript(history []models.Message) string {
	var b strings.Builder
	for _, m := range history {
		if m.Text == "" {
			continue
		}
		who := "The person"
		if m.Role == "assistant" {
			who = "You"
		}
		fmt.Fprintf(&b, "%s: %s\n\n", who, m.Text)
	}
	if b.Len() == 0 {
		return ""
	}
	return "Earlier in this conversation:\n\n" + b.String() + "Now the person writes:\n\n"
}

// planSession is the agent session the conversation keeps on provider, "" for none.
func (s *Service) planSession(ctx context.Context, convID, provider string) (string, error) {
	var prov, session string
	err := s.cfg.Store.Reader().QueryRowContext(ctx,
		"SELECT plan_provider, plan_session FROM assistant_conversations WHERE id = ?", convID).Scan(&prov, &session)
	if err != nil {
		return "", fmt.Errorf("assistant: read the plan's session of %s: %w", convID, err)
	}
	if prov != provider {
		return "", nil // another plan's session, or none: this one starts afresh
	}
	return session, nil
}

// keepPlanSession remembers the agent session that answered, for the next message.
func (s *Service) keepPlanSession(ctx context.Context, convID, provider, session string) error {
	return s.cfg.Writer.Exec(context.WithoutCancel(ctx), func(t *ledger.Tx) error {
		_, err := t.ExecContext(t.Context(), "UPDATE assistant_conversations SET plan_provider = ?, plan_session = ? WHERE id = ?",
			provider, session, convID)
		if err != nil {
			return fmt.Errorf("assistant: keep the plan's session of %s: %w", convID, err)
		}
		return nil
	})
}
