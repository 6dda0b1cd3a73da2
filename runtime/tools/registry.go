// Package tools is the registry of the tools a model may call over the person's records, and the
// Hub's tools themselves (tasks, pages, projects, people, repositories, search, a web page, agent
// runs, playbooks, personal skills and ordered workflows). Each tool declares its input once, as a
// Go type its schema is derived from. The assistant's turn loop calls them, and so does the
// bridge's server side, without the turn loop; nodes will call the same registry.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/records"
)

// Tool is one thing the assistant can do: a read (Run) or a write (Write or Outside). Its input
// is checked against Schema, then Prepare'd, before any of them is called (spec 000 §4).
type Tool struct {
	Name        string
	Description string
	// Area is the part of Ensemble the tool works in, one of toolAreas: a tool row names it, so the
	// dock shows what a call touched.
	Area string
	// Risk is what a call could cost the person if it was not what they meant; a held write's
	// card and its Needs me question show it.
	Risk Risk
	// Undoable says whether a write's change can be undone from its receipt; every write
	// declares it, a read leaves it unset.
	Undoable Undo
	// Schema is the input's JSON schema (an object).
	Schema json.RawMessage
	// Prepare resolves and checks a write's input against the records as they are now, before it
	// is previewed, held or run, and again at Apply: it returns the input the write really runs
	// with (a task named by title becomes its id), or a sentence for the model saying why nothing
	// was done. Given its own answer it must return it unchanged, so Apply does what was previewed.
	Prepare func(ctx context.Context, tc *ToolContext, input json.RawMessage) (json.RawMessage, error)
	// Run answers a read.
	Run func(ctx context.Context, tc *ToolContext, input json.RawMessage) (Result, error)
	// Write makes a write's change inside b, so several held writes can be applied as one
	// transaction and one Undo group. It must only write through b.
	Write func(ctx context.Context, tc *ToolContext, b *records.Batch, input json.RawMessage) (Result, error)
	// Preview says what a write would do, in a sentence a person reads beside Apply; it must not
	// write.
	Preview func(ctx context.Context, tc *ToolContext, input json.RawMessage) (string, error)
	// AlwaysHold makes a write wait for Apply whatever the write policy (assigning work to an agent,
	// which spends the person's money and time).
	AlwaysHold bool
	// Outside is a write made outside the records transaction (starting an agent run), instead of
	// Write: Apply runs it after the held Hub writes commit, one at a time. claim marks its held
	// write applied with the result; the tool must call it inside the transaction that makes its
	// change, so a second Apply finds the write claimed and changes nothing. It has no Undo.
	Outside func(ctx context.Context, tc *ToolContext, input json.RawMessage, claim func(tx *ledger.Tx, res Result) error) (Result, error)

	// IsWrite is set by Register: the tool has a Write or an Outside.
	IsWrite  bool
	resolved *jsonschema.Resolved
}

// toolAreas are the parts of Ensemble a tool may work in (spec 000 §8).
var toolAreas = []string{"tasks", "pages", "projects", "people", "repos", "search", "web", "agents", "skills", "workflows", "node"}

// Risk is how much a call could cost the person if it was not what they meant.
type Risk string

// The risks. A read is always low: it changes nothing.
const (
	// RiskLow is a read, or a write that only adds a record.
	RiskLow Risk = "low"
	// RiskMedium is a write that changes records in place, or adds many at once.
	RiskMedium Risk = "medium"
	// RiskHigh is a write that removes records, makes several writes at once, or starts work
	// outside the records (an agent run) that spends the person's time and money.
	RiskHigh Risk = "high"
)

// Undo is whether a write's change can be undone.
type Undo uint8

// The answers a write gives; a read gives none.
const (
	// Undoable is a write whose change is one ledger group, undone from its receipt.
	Undoable Undo = iota + 1
	// NoUndo is a write whose change Undo cannot take back (a started agent run): its receipt
	// says so and the dock offers no Undo.
	NoUndo
)

// ToolContext is what a running tool may use.
type ToolContext struct {
	Records *records.Service
	// Actor is who the ledger records the write as: the assistant, with the conversation id.
	Actor ledger.Actor
	// Runs assigns tasks to coding agents and lists their sessions; nil where no agents run.
	Runs Runs
	// Skills reads the person's personal skills for hub_read_skill; nil where there are none.
	Skills SkillReader
	// WriteAllowed checks a write's area against the person's settings (a workflow's steps are
	// each checked); nil allows every area.
	WriteAllowed func(ctx context.Context, t *Tool) error
	// Turn is what the caller of a turn gives its own tools: a node's turn, for the node's tools;
	// nil in the assistant's own turns and on the bridge.
	Turn any
}

// Result is what a tool returns: a summary a person reads (titles and counts, never ids), data for
// the model (ids included), the records it touched and the Undo group of a write.
type Result struct {
	Summary string `json:"summary"`
	Data    any    `json:"data,omitempty"`
	Refs    []Ref  `json:"refs,omitempty"`
	// Group is the ledger group of a write, to undo it.
	Group string `json:"group,omitempty"`
}

// Ref is a record a result names.
type Ref struct {
	Kind  string `json:"kind"`
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Registry holds the tools by name.
type Registry struct {
	tools map[string]*Tool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{tools: map[string]*Tool{}} }

// Register adds t, compiling its schema. A tool without a name, an area or a risk, a write that
// does not say whether it can be undone or cannot be previewed, a second tool of the same name,
// or a schema that does not compile, is an error.
func (r *Registry) Register(t Tool) error {
	funcs := 0
	for _, set := range []bool{t.Run != nil, t.Write != nil, t.Outside != nil} {
		if set {
			funcs++
		}
	}
	if t.Name == "" || funcs != 1 {
		return fmt.Errorf("tools: a tool needs a name and one of a run, a write or an outside func")
	}
	t.IsWrite = t.Run == nil
	if err := t.checkContract(); err != nil {
		return fmt.Errorf("tools: tool %s: %w", t.Name, err)
	}
	if _, dup := r.tools[t.Name]; dup {
		return fmt.Errorf("tools: tool %s registered twice", t.Name)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(t.Schema, &s); err != nil {
		return fmt.Errorf("tools: tool %s: schema: %w", t.Name, err)
	}
	res, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("tools: tool %s: schema: %w", t.Name, err)
	}
	t.resolved = res
	r.tools[t.Name] = &t
	return nil
}

// checkContract checks the fields spec 000 §4 asks of a tool: its area and risk, and of a write
// its preview and its Undo, which the dock relies on to offer Undo only where it works.
func (t *Tool) checkContract() error {
	if !slices.Contains(toolAreas, t.Area) {
		return fmt.Errorf("area %q is not one of %s", t.Area, strings.Join(toolAreas, ", "))
	}
	switch t.Risk {
	case RiskLow, RiskMedium, RiskHigh:
	default:
		return fmt.Errorf("risk %q is not low, medium or high", t.Risk)
	}
	if !t.IsWrite {
		switch {
		case t.Risk != RiskLow:
			return fmt.Errorf("a read changes nothing, so its risk is low, not %s", t.Risk)
		case t.Undoable != 0 || t.Prepare != nil:
			return fmt.Errorf("a read has nothing to undo or prepare")
		}
		return nil
	}
	switch {
	case t.Preview == nil:
		return fmt.Errorf("a write needs a preview")
	case t.Undoable != Undoable && t.Undoable != NoUndo:
		return fmt.Errorf("a write must say whether it can be undone")
	case t.Outside != nil && t.Undoable != NoUndo:
		return fmt.Errorf("a write made outside the records has no Undo")
	}
	return nil
}

// Get returns the tool named, or nil.
func (r *Registry) Get(name string) *Tool { return r.tools[name] }

// Names lists the tools' names in order.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.tools))
	for n := range r.tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Describe returns the tools as offered to a model.
func (r *Registry) Describe(names []string) []models.Tool {
	var out []models.Tool
	for _, n := range names {
		if t := r.tools[n]; t != nil {
			out = append(out, models.Tool{Name: t.Name, Description: t.Description, Schema: t.Schema})
		}
	}
	return out
}

// Call prepares input and runs the tool: a read as it is, a write as its own transaction and
// Undo group, described by its result's summary.
func (t *Tool) Call(ctx context.Context, tc *ToolContext, input json.RawMessage) (Result, error) {
	input, err := t.Prepared(ctx, tc, input)
	if err != nil {
		return Result{}, err
	}
	return t.Dispatch(ctx, tc, input)
}

// Prepared is input as the tool will really run it: Prepare's answer, checked against the schema
// again, or input itself for a tool without Prepare. No input is {}.
func (t *Tool) Prepared(ctx context.Context, tc *ToolContext, input json.RawMessage) (json.RawMessage, error) {
	input = rawOr(input)
	if t.Prepare == nil {
		return input, nil
	}
	out, err := t.Prepare(ctx, tc, input)
	if err != nil {
		return nil, err
	}
	if err := t.Validate(out); err != nil {
		return nil, fmt.Errorf("tools: %s prepared an input its schema refuses: %w", t.Name, err)
	}
	return out, nil
}

// Dispatch runs the tool on an input already Prepared: a read as it is, a write as its own
// transaction and Undo group.
func (t *Tool) Dispatch(ctx context.Context, tc *ToolContext, input json.RawMessage) (Result, error) {
	switch {
	case t.Outside != nil:
		return t.Outside(ctx, tc, input, func(*ledger.Tx, Result) error { return nil }) // no held write to claim
	case t.Write == nil:
		return t.Run(ctx, tc, input)
	}
	var res Result
	g, err := tc.Records.Batch(ctx, tc.Actor, "", func(b *records.Batch) error {
		var err error
		res, err = t.Write(ctx, tc, b, input)
		b.Tx().Describe("%s", res.Summary)
		return err
	})
	if err != nil {
		return Result{}, err
	}
	res.Group = g.ID
	return res, nil
}

func rawOr(in json.RawMessage) json.RawMessage {
	if len(in) == 0 {
		return json.RawMessage("{}")
	}
	return in
}

// ForModel is the result as the model is sent it: the summary, then the data as JSON, cut to
// MaxToolResultChars.
func (r Result) ForModel() string {
	content := r.Summary
	if r.Data != nil {
		b, _ := json.Marshal(r.Data)
		content += "\n" + string(b)
	}
	return headAndTail(content, MaxToolResultChars)
}

// Validate checks input against the tool's schema. What it refuses is an [*InvalidInputError]
// saying every problem in a sentence of its own.
func (t *Tool) Validate(input json.RawMessage) error {
	var v any
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if err := json.Unmarshal(input, &v); err != nil {
		return &InvalidInputError{[]string{"The input is not JSON (" + Clause(err.Error()) + ")."}}
	}
	if _, ok := v.(map[string]any); !ok {
		return &InvalidInputError{[]string{"The input must be an object, not " + kindOf(v) + "."}}
	}
	err := t.resolved.Validate(v)
	if err == nil {
		return nil
	}
	problems := inputProblems(t.resolved.Schema(), v)
	if len(problems) == 0 {
		// A rule the walk does not read: the validator's words, without its schema paths.
		problems = []string{"The input does not fit the tool's schema: " + Clause(validatorWords(err)) + "."}
	}
	return &InvalidInputError{problems}
}

// validatorWords is a schema validator's error without the "validating …:" trail that leads it.
func validatorWords(err error) string {
	msg := err.Error()
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			return msg
		}
		_, after, found := strings.Cut(rest, ": ")
		if !found {
			return msg
		}
		msg = after
	}
}
