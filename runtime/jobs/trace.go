package jobs

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Family is the family of every run event ("run.…"): a run's trace is the events of this family
// whose subject is the run.
const Family = "run"

// The kinds of run events. Each has subject = the job id and a [Trace] as its data.
const (
	KindCreated     events.Kind = "run.created"      // the run was assigned
	KindStatus      events.Kind = "run.status"       // its status changed (Status, Reason)
	KindStarted     events.Kind = "run.started"      // the agent is up (Session, Model, Attempt)
	KindMessage     events.Kind = "run.message"      // the agent said Text
	KindThinking    events.Kind = "run.thinking"     // the agent thought Text
	KindToolStart   events.Kind = "run.tool_start"   // step Step: the agent called Tool with Input
	KindToolEnd     events.Kind = "run.tool_end"     // step Step returned Output (Failed), after DurationMs
	KindDecision    events.Kind = "run.decision"     // the judge refused or asked about a call, or the person answered
	KindQuestion    events.Kind = "run.question"     // the agent asked the person Text, or was answered
	KindUsage       events.Kind = "run.usage"        // tokens and cost so far
	KindError       events.Kind = "run.error"        // the agent or its protocol reported Text
	KindRetry       events.Kind = "run.retry"        // the engine failed; carrying on after RetryInMs
	KindSessionGone events.Kind = "run.session_gone" // the session could not be reopened; a new one starts with the full brief
	KindNote        events.Kind = "run.note"         // Ensemble's word on how the agent runs: a setting its model does not take, left out (Text)
	KindEnded       events.Kind = "run.ended"        // the run ended: Status, Summary (up to 20,000 characters), Error, Usage
)

// EventSpecs lists the kinds of run event, for the catalog.
func EventSpecs() []events.Spec {
	return []events.Spec{
		{Kind: KindCreated, Payload: Trace{}, Doc: "the run was assigned"},
		{Kind: KindStatus, Payload: Trace{}, Doc: "its status changed"},
		{Kind: KindStarted, Payload: Trace{}, Doc: "the agent is up"},
		{Kind: KindSession, Payload: Trace{}, Doc: "the agent session the run works in, and why"},
		{Kind: KindMessage, Payload: Trace{}, Doc: "the agent said something"},
		{Kind: KindThinking, Payload: Trace{}, Doc: "the agent thought something"},
		{Kind: KindToolStart, Payload: Trace{}, Doc: "a step: the agent called a tool"},
		{Kind: KindToolEnd, Payload: Trace{}, Doc: "the step's tool returned"},
		{Kind: KindDecision, Payload: Trace{}, Doc: "the judge refused or asked about a call, or the person answered"},
		{Kind: KindQuestion, Payload: Trace{}, Doc: "the agent asked the person, or was answered"},
		{Kind: KindUsage, Payload: Trace{}, Doc: "tokens and cost so far"},
		{Kind: KindError, Payload: Trace{}, Doc: "the agent or its protocol reported an error"},
		{Kind: KindRetry, Payload: Trace{}, Doc: "the engine failed; carrying on after a pause"},
		{Kind: KindSessionGone, Payload: Trace{}, Doc: "the session could not be reopened; a new one starts"},
		{Kind: KindNote, Payload: Trace{}, Doc: "Ensemble's word on how the agent runs"},
		{Kind: KindEvidence, Payload: Trace{}, Doc: "a file the agent attached for the person to see"},
		{Kind: KindReport, Payload: Trace{}, Doc: "the agent's own report"},
		{Kind: KindEnded, Payload: Trace{}, Doc: "the run ended"},
		{Kind: KindLive, Payload: Live{}, Doc: "the run's live picture of the tab its agent uses changed, or went (live only)"},
	}
}

// Trace is the data of a run event; the fields set depend on its kind.
type Trace struct {
	RunID      string         `json:"runId"`
	TaskID     string         `json:"taskId,omitempty"`
	Agent      string         `json:"agent,omitempty"`
	Status     Status         `json:"status,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Text       string         `json:"text,omitempty"`
	Step       int            `json:"step,omitempty"`
	Tool       string         `json:"tool,omitempty"`
	ToolID     string         `json:"toolId,omitempty"`
	Input      string         `json:"input,omitempty"`
	Output     string         `json:"output,omitempty"`
	Failed     bool           `json:"failed,omitempty"`
	DurationMs int64          `json:"durationMs,omitempty"`
	Decision   string         `json:"decision,omitempty"` // allow, refuse, ask; answered: allow, allow_run, deny
	Rule       string         `json:"rule,omitempty"`
	Usage      *engines.Usage `json:"usage,omitempty"`
	Session    string         `json:"session,omitempty"`
	Model      string         `json:"model,omitempty"`
	Attempt    int            `json:"attempt,omitempty"`
	RetryInMs  int64          `json:"retryInMs,omitempty"`
	Summary    string         `json:"summary,omitempty"`
	Turns      int            `json:"turns,omitempty"`
	Changes    []FileChange   `json:"changes,omitempty"` // run.ended: the files changed, with line counts
	// Sandbox is, on run.started and each run.tool_start, which OS sandbox confines the run (or the
	// step): the receipt that makes a run with none visible as such.
	Sandbox *engines.Enforcement `json:"sandbox,omitempty"`
	// SandboxStopped marks a run.tool_end whose output says the OS sandbox stopped the command.
	SandboxStopped bool `json:"sandboxStopped,omitempty"`
}

// record is one run event waiting to be written.
type record struct {
	kind events.Kind
	data Trace
}

// recorder writes a run's events in order, off the engine's goroutine: Host.Event must not block
// for long. Events that arrive while a write is going are written together in the next one.
type recorder struct {
	w    *ledger.Writer
	id   string
	log  func(msg string, args ...any)
	hide func(string) string // the known secrets' values

	mu      sync.Mutex // guards the following fields
	pending []record
	jobSet  map[string]any // job columns to update with the next write
	busy    bool
	closed  bool // the run's end is written: later additions are dropped
	idle    *sync.Cond
}

func newRecorder(w *ledger.Writer, id string, log func(string, ...any), hide func(string) string) *recorder {
	r := &recorder{w: w, id: id, log: log, hide: hide, jobSet: map[string]any{}}
	r.idle = sync.NewCond(&r.mu)
	return r
}

// add queues an event and, optionally, columns of the job row to set with it.
func (r *recorder) add(kind events.Kind, data Trace, set map[string]any) {
	data.RunID = r.id
	data = data.hidden(r.hide)
	for k, v := range set {
		if s, ok := v.(string); ok {
			set[k] = r.hide(s)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if kind != "" {
		r.pending = append(r.pending, record{kind, data})
	}
	for k, v := range set {
		r.jobSet[k] = v
	}
	if !r.busy {
		r.busy = true
		go r.drain()
	}
}

func (r *recorder) drain() {
	for {
		r.mu.Lock()
		batch, set := r.pending, r.jobSet
		r.pending, r.jobSet = nil, map[string]any{}
		if len(batch) == 0 && len(set) == 0 {
			r.busy = false
			r.idle.Broadcast()
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		err := r.w.Exec(context.Background(), func(t *ledger.Tx) error {
			for _, rec := range batch {
				if err := t.Emit(rec.kind, r.id, rec.data); err != nil {
					return err
				}
			}
			return updateJob(t, r.id, set)
		})
		if err != nil {
			r.log("run events not recorded", "run", r.id, "events", len(batch), "err", err)
		}
	}
}

// flush waits until everything added so far is written.
func (r *recorder) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.busy {
		r.idle.Wait()
	}
}

// close writes what is pending and drops what comes later: the run's end is being recorded.
func (r *recorder) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.busy {
		r.idle.Wait()
	}
	r.closed = true
}

// updateJob sets columns of a job row (names come from this package's code, never a request).
func updateJob(t *ledger.Tx, id string, set map[string]any) error {
	if len(set) == 0 {
		return nil
	}
	q, args := "UPDATE jobs SET updated_at = ?", []any{store.Stamp(t.Now())}
	for k, v := range set {
		if b, ok := v.(jsonValue); ok {
			raw, _ := json.Marshal(b.v)
			v = string(raw)
		}
		q += ", " + k + " = ?"
		args = append(args, v)
	}
	_, err := t.ExecContext(t.Context(), q+" WHERE id = ?", append(args, id)...)
	return err
}

// jsonValue marks a column value to store as JSON.
type jsonValue struct{ v any }

// openCall is a tool call that has started and not yet returned.
type openCall struct {
	step   int
	tool   string
	at     time.Time
	secret bool // it reads a secrets file: its output is not kept
}
