// Package assistant is Ensemble's assistant: the loop that answers one turn with a model, calling
// the tools of runtime/tools, and what a turn leaves behind: conversations, held writes (Apply in
// the chat or an answer on Needs me), a held workflow's steps, settings, and turns run on the
// person's own AI plan. It routes a message to the playbooks (runtime/playbooks) and names the
// person's skills (runtime/skills) in its instructions.
package assistant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/loopback"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// Turn limits.
const (
	// MaxSteps is the most model requests one turn makes; the last has tools off.
	MaxSteps = 8
	// HistoryMessages is how many earlier messages a turn sends.
	HistoryMessages = 12
)

// Config sets up a Service.
type Config struct {
	Records *records.Service
	// Store keeps the conversations and the settings; Writer writes them and publishes their
	// events. Both are required.
	Store  *store.Store
	Writer *ledger.Writer
	// Tools are the tools a turn offers; HubTools() when nil.
	Tools *tools.Registry
	// Providers returns the provider a turn names ("anthropic" or "openai") at baseURL ("" for the
	// default). When nil, keys come from the environment (models.FromEnv) with Timeout.
	Providers func(provider, baseURL string) (models.Provider, error)
	// Timeout is how long one model call waits; models.TimeoutFromEnv() when zero.
	Timeout time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Needs is where a write held under the needs-me policy waits; without it such a write waits
	// for Apply in the chat only.
	Needs *needs.Service
	// Runs is where hub_assign_to_agent and hub_list_agent_sessions reach the agents' runs; nil,
	// they say no agents run here.
	Runs tools.Runs
	// Log is for what no person waits to hear; slog.Default() when nil.
	Log *slog.Logger
	// Plans are the agents a turn can run on as the person's own plan, by driver name ("claude",
	// "codex"; spec 003 §8). PlanDir holds each conversation's folder, PlanMCPURL is where the
	// agent reaches the turn's tools (the runtime's route to PlanMCP), and PlanReady, when set,
	// says why an agent cannot run now (not installed, signed out).
	Plans      map[string]engines.Driver
	PlanDir    string
	PlanMCPURL string
	PlanReady  func(ctx context.Context, agent string) error
	// Hide hides the values of the secrets kept on this computer. Everything a turn sends a model
	// passes through it on the way out (see [Service.outbound]), and so does what a tool row shows
	// the person. nil hides none.
	Hide func(string) string
}

// Service answers assistant turns. Conversations and settings are kept in SQLite; which
// conversations are answering now is kept in memory, since a turn does not outlive the process.
type Service struct {
	cfg        Config
	settingsMu sync.Mutex // serialises SetSettings

	mu        sync.Mutex // guards the following fields
	turns     map[string]*running
	planTurns map[string]*planTurn // by their secret's hash

	// life ends at Close; the Needs me waits of held writes run under it.
	life    context.Context
	endLife context.CancelFunc
	wg      sync.WaitGroup
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Tools == nil {
		cfg.Tools = tools.HubTools()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = models.TimeoutFromEnv()
	}
	if cfg.Providers == nil {
		timeout := cfg.Timeout
		cfg.Providers = func(p, base string) (models.Provider, error) { return models.FromEnv(p, base, timeout) }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	life, end := context.WithCancel(context.Background())
	return &Service{cfg: cfg, turns: map[string]*running{}, life: life, endLife: end}
}

// TurnRequest is one message from the person.
type TurnRequest struct {
	ConversationID string `json:"conversationId,omitempty"`
	Text           string `json:"text"`
	Provider       string `json:"provider,omitempty"`
	Model          string `json:"model"`
	BaseURL        string `json:"baseUrl,omitempty"`
	Effort         string `json:"effort,omitempty"`
	// Path is the open screen's path ("/tasks"); routing playbooks counts it as a tie-break.
	Path string `json:"path,omitempty"`
	// Agent, when set, answers in the assistant's place (a node's turn); the API never sets it.
	Agent *Agent `json:"-"`
}

// ToolRow is one tool call of a turn as a person sees it.
type ToolRow struct {
	CallID  string `json:"callId"`
	Name    string `json:"name"`
	IsWrite bool   `json:"isWrite,omitempty"`
	// Status is "running", "done" or "error"; for a held write "proposed" (waiting for Apply in
	// the chat), "waiting" (on Needs me, and for Apply in the chat) or "discarded".
	Status  string      `json:"status"`
	Summary string      `json:"summary,omitempty"`
	Refs    []tools.Ref `json:"refs,omitempty"`
	// Group is the Undo group of a write that landed.
	Group string `json:"group,omitempty"`
	// ProposalID names a held write, for Apply; Preview says what it does. A held write that was
	// applied keeps both (the dock marks it Applied).
	ProposalID string `json:"proposalId,omitempty"`
	Preview    string `json:"preview,omitempty"`
	// Undone: the write's group has been undone since.
	Undone bool `json:"undone,omitempty"`
	// Area is the part of Ensemble the tool works in (tasks, pages, …): what the call touched.
	Area string `json:"area,omitempty"`
	// Risk is a held write's risk (low, medium, high), shown on its card.
	Risk tools.Risk `json:"risk,omitempty"`
	// NoUndo: the write cannot be undone (it started an agent run), so no Undo is offered for it.
	NoUndo bool `json:"noUndo,omitempty"`
}

// Reply is a finished turn.
type Reply struct {
	ConversationID string       `json:"conversationId"`
	MessageID      string       `json:"messageId,omitempty"`
	Text           string       `json:"text"`
	Tools          []ToolRow    `json:"tools"`
	Steps          int          `json:"steps"`
	Usage          models.Usage `json:"usage"`
}

// The kinds of [Event], in the order a turn sends them. The HTTP API streams them as they are,
// with its own "error" last for a turn that failed (docs/assistant-turn.md).
const (
	EventConversation = "conversation" // the conversation's id, first
	EventRefs         = "refs"         // the records the turn knows, before any text
	EventText         = "text"         // a piece of the reply's text as it streams
	EventTool         = "tool"         // a tool row, when its call starts and when it ends
	EventDone         = "done"         // the finished reply, last
)

// EventKinds are the kinds of [Event] a turn sends.
var EventKinds = []string{EventConversation, EventRefs, EventText, EventTool, EventDone}

// Event is one piece of a turn as it happens: its Type is one of [EventKinds]. A failed turn ends
// with the error Turn returns instead of "done".
type Event struct {
	Type           string   `json:"type"`
	ConversationID string   `json:"conversationId,omitempty"`
	Text           string   `json:"text,omitempty"`
	Tool           *ToolRow `json:"tool,omitempty"`
	Reply          *Reply   `json:"reply,omitempty"`
	// Refs ("refs", before any text) are the records the turn knows, so a client shows titles
	// for their ids (spec 000 §4.1).
	Refs []tools.Ref `json:"refs,omitempty"`
}

// Turn answers req, sending events to emit (which may be nil) as they happen. The person's message
// is saved when the turn begins and the reply when it ends, before "done" is sent. The error's text
// is the sentence to show; a model past its limit is a *models.TimeoutError, a stopped turn
// [ErrStopped].
func (s *Service) Turn(ctx context.Context, req TurnRequest, emit func(Event)) (Reply, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	req.Text = strings.TrimSpace(req.Text)
	if req.Text == "" {
		return Reply{}, problem.Invalid("Write a message first.")
	}
	if req.BaseURL != "" && !localURL(req.BaseURL) {
		// The provider's key from this computer's settings goes to the base URL: a request must not
		// be able to send it anywhere else.
		return Reply{}, problem.Invalid("A base URL in a request must be a model server on this computer (such as Ollama at http://127.0.0.1:11434/v1); set another provider's address in Ensemble's settings.")
	}
	settings, err := s.Settings(ctx)
	if err != nil {
		return Reply{}, err
	}
	req = settings.fill(req)
	answer, err := s.answerer(ctx, req)
	if err != nil {
		return Reply{}, err
	}
	id, isNew := req.ConversationID, req.ConversationID == ""
	if isNew {
		id = ledger.NewID("cnv_")
	} else if req.Agent != nil {
		// An agent names its conversations before their first turn, so a crash never leaves one
		// it does not know.
		if isNew, err = s.exists(ctx, id); err != nil {
			return Reply{}, err
		}
		isNew = !isNew
	}
	tctx, claim, err := s.claim(ctx, id)
	if err != nil {
		return Reply{}, err
	}
	defer s.release(id, claim)
	history, err := s.open(ctx, id, isNew, req.Text, req.Agent)
	if err != nil {
		return Reply{}, err
	}
	emit(Event{Type: EventConversation, ConversationID: id})
	reply, err := answer(tctx, id, req, req.Agent.policyFor(settings.WritePolicy), history, emit)
	stopped := err != nil && tctx.Err() != nil && !models.IsTimeout(err)
	m := Message{Role: "assistant", Text: reply.Text, Tools: reply.Tools}
	switch {
	case stopped:
		m.Text, m.Stopped, m.history = strings.TrimSpace(reply.Text), true, historyText(strings.TrimSpace(reply.Text), reply.Tools)
		err = ErrStopped
	case models.IsCutOff(err):
		// What arrived stays, with the sentence after it, and a later turn is told it was cut off.
		streamed := strings.TrimSpace(reply.Text)
		m.Error, m.CutOff, m.Text = true, true, strings.TrimSpace(streamed+"\n\n"+err.Error())
		m.history = cutOffHistory(streamed, reply.Tools)
	case err != nil:
		m.Error = true
		if streamed := strings.TrimSpace(reply.Text); streamed != "" {
			m.Text = streamed + "\n\n" + err.Error() // what arrived stays, with the sentence after it
		} else {
			m.Text = err.Error()
		}
	default:
		m.history = historyText(reply.Text, reply.Tools)
	}
	msgID, serr := s.save(ctx, id, m)
	if serr != nil {
		return reply, fmt.Errorf("The reply could not be saved, so it will be missing from this conversation: %w", serr)
	}
	reply.MessageID = msgID
	if err != nil {
		return reply, err
	}
	emit(Event{Type: EventDone, ConversationID: id, Reply: &reply})
	return reply, nil
}

// answerFunc answers a turn whose person's message is saved.
type answerFunc func(ctx context.Context, convID string, req TurnRequest, policy string, history []models.Message, emit func(Event)) (Reply, error)

// answerer checks req's provider, model and effort before anything is spent, and returns what
// answers it: the tool loop on a model API, or the agent of the person's plan.
func (s *Service) answerer(ctx context.Context, req TurnRequest) (answerFunc, error) {
	if p, ok := aiPlans[req.Provider]; ok {
		if err := p.checkEffort(req.Effort); err != nil {
			return nil, problem.New(problem.KindInvalid, err.Error())
		}
		d, err := s.planDriver(ctx, p)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, convID string, req TurnRequest, policy string, history []models.Message, emit func(Event)) (Reply, error) {
			return s.runPlan(ctx, p, d, convID, req, policy, history, emit)
		}, nil
	}
	if req.Model == "" {
		return nil, problem.Invalid("Choose a model: name one with the message, or set one in the assistant's settings.")
	}
	if err := models.CheckEffort(req.Provider, req.Model, req.Effort); err != nil {
		return nil, problem.New(problem.KindInvalid, err.Error())
	}
	provider, err := s.cfg.Providers(req.Provider, req.BaseURL)
	if err != nil {
		return nil, problem.New(problem.KindInvalid, err.Error())
	}
	return func(ctx context.Context, convID string, req TurnRequest, policy string, history []models.Message, emit func(Event)) (Reply, error) {
		return s.run(ctx, provider, convID, req, policy, history, emit)
	}, nil
}

// historyText is what later turns send the model for a reply: its text, then one line per write
// that landed with links to the records it touched, so the model can refer to them.
func historyText(text string, tools []ToolRow) string {
	var lines []string
	for _, t := range tools {
		if !t.IsWrite || t.Status != "done" {
			continue
		}
		line := t.Summary
		if len(t.Refs) > 0 {
			var links []string
			for _, r := range t.Refs {
				links = append(links, fmt.Sprintf("[%s](ensemble://%s/%s)", r.Title, r.Kind, r.ID))
			}
			line += " Records: " + strings.Join(links, ", ")
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.TrimSpace(text + "\n\n" + strings.Join(lines, "\n"))
}

// cutOffNote ends a cut-off reply in later turns' history, so the model knows its answer there
// did not finish and the person may ask for the rest.
const cutOffNote = "[This answer was cut off: the connection to the model broke before it finished, so the text above is all that arrived, and nothing after it was done.]"

// cutOffHistory is what later turns send the model for a reply that broke off: the text that
// arrived, the writes that landed before the break, and the note that it was cut off.
func cutOffHistory(text string, tools []ToolRow) string {
	if h := historyText(text, tools); h != "" {
		text = h
	}
	return strings.TrimSpace(text + "\n\n" + cutOffNote)
}

const instructions = `You are Ensemble's assistant. You help the person with their tasks, using the tools you are given.
Today is %s.
- Use a tool to look things up or change records; never say you did something a tool did not do.
- %s
- Ids are for tool calls. In replies, name records by title, or as [Title](ensemble://kind/id); give a raw id only when asked.
- When a tool returns an error, fix the call or tell the person in a sentence what went wrong.
- Be brief.`

const nudge = "You said you would do that, but you made no tool call. Make the call now, or answer without promising to."

// toolContext is what the conversation's tools run with, in a turn or on Apply: the ledger
// records their writes as the assistant's, with the conversation's id.
func (s *Service) toolContext(ctx context.Context, convID string, a *Agent) *tools.ToolContext {
	tc := &tools.ToolContext{Records: s.cfg.Records, Runs: s.cfg.Runs, Skills: s, WriteAllowed: s.writeAllowed}
	if a != nil {
		tc.Actor, tc.Turn = a.Actor, a.Turn
		return tc
	}
	actor, err := s.actorOf(ctx, convID)
	if err != nil {
		s.cfg.Log.Warn("assistant: read a conversation's actor", "conversation", convID, "err", err)
	}
	tc.Actor = actor
	return tc
}

// writeModeNote tells the model what its writes do under the policy, so it words its reply right.
func writeModeNote(policy string) string {
	switch policy {
	case Preview:
		return "Writes wait for the person's Apply in the chat: a write tool saves a proposal and nothing changes until they apply it. Say so; never say it is done."
	case NeedsMe:
		return "Writes wait for the person's answer on Needs me: a write tool saves a proposal and nothing changes until they apply it. Say so; never say it is done."
	}
	return "Writes happen at once and the person can undo them."
}

func (s *Service) run(ctx context.Context, provider models.Provider, convID string, req TurnRequest, policy string, history []models.Message, emit func(Event)) (Reply, error) {
	reply := Reply{ConversationID: convID, Tools: []ToolRow{}}
	offered := s.offered(req.Agent) // what may run; prep.shown is what the model is shown
	prep, text := s.begin(ctx, convID, req, emit)
	msgs := append(history, models.Message{Role: "user", Text: text})
	tc := s.toolContext(ctx, convID, req.Agent)
	streamed := ""
	nudged := false
	for step := 0; step < MaxSteps; step++ {
		last := step == MaxSteps-1
		mreq := models.Request{
			Model:    req.Model,
			System:   s.system(policy, prep),
			Messages: msgs,
			Tools:    prep.tools(s.cfg.Tools),
			ToolsOff: last,
			Effort:   req.Effort,
		}
		resp, err := provider.Stream(ctx, s.outbound(mreq), func(d string) {
			streamed += d
			emit(Event{Type: EventText, Text: d})
		})
		reply.Steps = step + 1
		reply.Usage.InputTokens += resp.Usage.InputTokens
		reply.Usage.OutputTokens += resp.Usage.OutputTokens
		if err != nil {
			reply.Text = streamed
			return reply, modelError(req.Model, err)
		}
		calls := resp.ToolCalls
		if last {
			calls = nil // tools were off: a call now is not followed
		}
		if len(calls) == 0 {
			text := strings.TrimSpace(resp.Text)
			if !nudged && !last && needsNudge(text, len(reply.Tools) > 0) {
				nudged = true
				msgs = append(msgs, models.Message{Role: "assistant", Text: resp.Text}, models.Message{Role: "user", Text: nudge})
				streamed += "\n\n"
				emit(Event{Type: EventText, Text: "\n\n"})
				continue
			}
			if text == "" {
				reply.Text = streamed
				return reply, errors.New("The model ended without an answer. Ask again.")
			}
			reply.Text = prep.reply(text)
			return reply, nil
		}
		msgs = append(msgs, models.Message{Role: "assistant", Text: resp.Text, ToolCalls: calls})
		results := make([]models.ToolResult, 0, len(calls))
		for _, c := range calls {
			row, content, isErr := s.call(ctx, tc, convID, offered, policy, c, emit)
			prep.called(s.cfg.Tools, row, c, isErr)
			reply.Tools = append(reply.Tools, row)
			results = append(results, models.ToolResult{CallID: c.ID, Name: c.Name, Content: content, IsError: isErr})
		}
		msgs = append(msgs, models.Message{Role: "user", ToolResults: results})
		if resp.Text != "" {
			streamed += "\n\n"
			emit(Event{Type: EventText, Text: "\n\n"})
		}
	}
	reply.Text = streamed
	return reply, errors.New("The assistant ran out of steps before answering. Ask again, or ask for less at once.")
}

// begin prepares a turn: the records it knows go out as the refs frame, before any text, and the
// message goes to the model with the writes still held and the turn's context block in front.
func (s *Service) begin(ctx context.Context, convID string, req TurnRequest, emit func(Event)) (*turnPrep, string) {
	prep := s.prepare(ctx, convID, req)
	emit(Event{Type: EventRefs, Refs: prep.known()})
	text := req.Text
	if note := s.heldNote(ctx, convID); note != "" {
		text = note + "\n\n" + text
	}
	return prep, prep.context + text
}

// outbound is req as a model may see it, with the values of the secrets kept here hidden in all of
// it. It is the one place that hides them from models: a model-key turn's every request passes
// through it as it is sent, and a plan turn's instructions, prompt, tool list and tool results on
// their way to the agent. So a value the person typed in an earlier message, a record's title in a
// write's receipt, a skill's title in the instructions or a tool's result never reaches a model,
// whichever source it came from.
func (s *Service) outbound(req models.Request) models.Request {
	return req.Hidden(s.cfg.Hide)
}

// hide hides the known secrets' values in what a person is shown of a tool (Config.Hide): its row
// is an event and is saved with the conversation.
func (s *Service) hide(v string) string {
	if s.cfg.Hide == nil || v == "" {
		return v
	}
	return s.cfg.Hide(v)
}

// system is the turn's instructions: the fixed ones, then the person's skills and the playbooks.
func (s *Service) system(policy string, prep *turnPrep) string {
	if prep.agent != nil && prep.agent.Instructions != "" {
		return prep.agent.Instructions + "\n- " + writeModeNote(policy) + prep.instructions
	}
	return fmt.Sprintf(instructions, s.cfg.Now().Format("Monday 2 January 2006"), writeModeNote(policy)) + prep.instructions
}

// call runs one tool call and returns its row, what the model is told, and whether that is an error.
func (s *Service) call(ctx context.Context, tc *tools.ToolContext, convID string, offered []string, policy string, c models.ToolCall, emit func(Event)) (ToolRow, string, bool) {
	row := ToolRow{CallID: c.ID, Name: c.Name, Status: "running"}
	fail := func(msg string) (ToolRow, string, bool) {
		row.Status, row.Summary = "error", s.hide(msg)
		emit(Event{Type: EventTool, Tool: &row})
		return row, msg, true
	}
	st, err := s.Settings(ctx)
	if err != nil {
		return fail(err.Error())
	}
	t := s.cfg.Tools.Get(c.Name)
	if t != nil && !st.allows(t) {
		// A write the person turned off is named as off, not as unknown.
		row.IsWrite, row.Area = t.IsWrite, t.Area
		return fail(toolOff(t))
	}
	if t == nil || !contains(offered, c.Name) {
		return fail(unknownTool(c.Name, callable(offered, s.cfg.Tools, st)))
	}
	row.IsWrite, row.Area, row.NoUndo = t.IsWrite, t.Area, t.Undoable == tools.NoUndo
	if err := t.Validate(c.Input); err != nil {
		return fail(fmt.Sprintf("The input for %s is not valid, so nothing was done. %s", c.Name, err))
	}
	input, err := t.Prepared(ctx, tc, c.Input)
	if err != nil {
		return fail(err.Error())
	}
	if hp := holdPolicy(t, policy); hp != "" {
		held, told, err := s.hold(ctx, tc, convID, t, c.ID, input, hp)
		if err != nil {
			return fail(err.Error())
		}
		emit(Event{Type: EventTool, Tool: &held})
		return held, told, false
	}
	emit(Event{Type: EventTool, Tool: &row})
	res, err := t.Dispatch(ctx, tc, input)
	if err != nil {
		return fail(err.Error())
	}
	row.Status, row.Summary, row.Refs, row.Group = "done", s.hide(res.Summary), resultRefs(t, res), res.Group
	emit(Event{Type: EventTool, Tool: &row})
	return row, res.ForModel(), false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// modelError is the sentence for a failed model call.
func modelError(model string, err error) error {
	if models.IsTimeout(err) || models.IsCutOff(err) || errors.Is(err, context.Canceled) {
		return err
	}
	return &sentenceError{fmt.Sprintf("%s could not answer: %s", model, tools.Sentence(err.Error())), err}
}

var (
	promiseRe  = regexp.MustCompile(`(?i)\b(let me|i'll|i will|i am going to|i'm going to|one moment)\b[^.?!]*\b(check|look|find|search|list|see|create|add|update|move|mark)`)
	announceRe = regexp.MustCompile(`(?i)(\bproceeding to\b|\bnow (i'll|i will|let me)\b|\bnext,? i'll\b|\bhub_[a-z_]+\s*\(|"name"\s*:\s*"hub_)`)
)

// needsNudge reports a text-only reply that promises a lookup before any tool ran, or, after tools
// ran, writes a tool call as text or announces the next write.
func needsNudge(text string, toolsRan bool) bool {
	if !toolsRan {
		return promiseRe.MatchString(text) && !strings.HasSuffix(text, "?")
	}
	return announceRe.MatchString(text)
}

// localURL reports whether raw is an http(s) URL on this computer's loopback.
func localURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopback.Host(u.Host)
}

// sentenceError is an error whose text is a sentence built around its cause's, which it wraps.
type sentenceError struct {
	msg   string
	cause error
}

func (e *sentenceError) Error() string { return e.msg }
func (e *sentenceError) Unwrap() error { return e.cause }
