package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ensemblework/ensemble/runtime/records"
)

// hub_run_workflow proposes 2–12 ordered Hub writes under one Apply (spec 000 §6, Ordered
// workflows). Each step names a write tool and its input; a value anywhere in a later step's input
// may be {"$ref": "<step id>.<path>"}, a value from an earlier step's result data
// ("tasks.created.0.id").
//
// Departure from the spec: the steps run in one records transaction, so a workflow lands whole or
// not at all and is one Undo group (the spec allows an Undo entry per step, a failure keeping the
// steps before it). Everything here is local, so one transaction costs nothing, and Retry is
// trivial: a failed workflow left nothing behind, and Apply runs it again from the first step.
//
// Each step's tools read through the batch's own transaction (records.Batch.Reads), so a step can
// look up, change or trash what an earlier step made.

// WorkflowTool is the name of the tool that runs ordered workflows: the assistant keeps a held
// one's steps beside its proposal.
const WorkflowTool = "hub_run_workflow"

const (
	minWorkflowSteps = 2
	maxWorkflowSteps = 12
)

var stepIDRe = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func workflowTool(r *Registry) Tool {
	return typedTool(Tool{
		Name: WorkflowTool,
		Area: "workflows",
		// Several writes under one Apply; they land as one ledger group, undone together.
		Risk:     RiskHigh,
		Undoable: Undoable,
		Description: "Propose 2 to 12 Hub writes that run in order under one Apply, all or nothing, as one Undo. " +
			"Do every read first; steps are writes only. A value in a later step's input may be " +
			`{"$ref": "<step id>.<path>"}, a value from an earlier step's result, e.g. {"$ref": "tasks.created.0.id"} ` +
			"or {\"$ref\": \"proj.project.name\"}. It always waits for the person's Apply.",
		AlwaysHold: true,
	}, Typed[WorkflowPlan]{
		Preview: func(ctx context.Context, tc *ToolContext, in WorkflowPlan) (string, error) {
			p, err := readPlan(r, in)
			if err == nil {
				err = p.allowed(ctx, tc)
			}
			if err != nil {
				return "", err
			}
			return p.preview(ctx, tc)
		},
		Write: func(ctx context.Context, tc *ToolContext, b *records.Batch, in WorkflowPlan) (Result, error) {
			p, err := readPlan(r, in)
			if err == nil {
				err = p.allowed(ctx, tc)
			}
			if err != nil {
				return Result{}, err
			}
			return p.run(ctx, tc, b)
		},
	})
}

// allowed checks every step's area against the person's settings, as a write of its own would be.
func (p *plan) allowed(ctx context.Context, tc *ToolContext) error {
	if tc.WriteAllowed == nil {
		return nil
	}
	for i, st := range p.steps {
		if err := tc.WriteAllowed(ctx, st.tool); err != nil {
			return fmt.Errorf("Step %d (%q): %w", i+1, st.id, err)
		}
	}
	return nil
}

// plan is a checked workflow: every step's tool is a Hub write, every ref points back.
type plan struct {
	title string
	steps []planStep
}

type planStep struct {
	id    string
	tool  *Tool
	input any       // decoded, refs still in place
	refs  []stepRef // in input order
}

// stepRef is one {"$ref": …} in a step's input.
type stepRef struct {
	at   string // where, for errors: "tasks.0.title"
	step int    // the step it points at
	path []string
	text string // as written
}

// WorkflowPlan is hub_run_workflow's input, as the model writes it; readPlan checks it. Its step
// counts are minWorkflowSteps and maxWorkflowSteps (a tag cannot name them; the schemas' golden
// pins them).
type WorkflowPlan struct {
	Title string         `json:"title" check:"minLength=1,maxLength=200" jsonschema:"what the workflow does, for the person"`
	Steps []WorkflowStep `json:"steps" check:"minItems=2,maxItems=12"`
}

// WorkflowStep is one step of a WorkflowPlan: a write tool and its input.
type WorkflowStep struct {
	ID    string          `json:"id" check:"minLength=1,maxLength=40" jsonschema:"a name for the step: lowercase letters, digits, _"`
	Tool  string          `json:"tool" jsonschema:"a Hub write tool"`
	Input json.RawMessage `json:"input" check:"type=object" jsonschema:"the tool's input; a value may be {\"$ref\": \"<earlier step id>.<path>\"}"`
}

// readPlan checks a workflow's input: its steps, their tools, their refs, and each step's input
// against its tool's schema with every ref replaced by a placeholder string. A ref so stands for a
// string (an id, a name); one where the schema wants something else is refused here.
func readPlan(r *Registry, in WorkflowPlan) (*plan, error) {
	if n := len(in.Steps); n < minWorkflowSteps || n > maxWorkflowSteps {
		return nil, fmt.Errorf("A workflow has %d to %d steps, not %d; make a single write with its own tool.", minWorkflowSteps, maxWorkflowSteps, n)
	}
	p := &plan{title: strings.TrimSpace(in.Title)}
	index := map[string]int{}
	for i, s := range in.Steps {
		n := i + 1
		if !stepIDRe.MatchString(s.ID) {
			return nil, fmt.Errorf("Step %d: its id %q must be lowercase letters, digits and _, starting with a letter.", n, s.ID)
		}
		if prev, dup := index[s.ID]; dup {
			return nil, fmt.Errorf("Step %d: the id %q is already step %d's; give each step its own id.", n, s.ID, prev+1)
		}
		name := fmt.Sprintf("Step %d (%q)", n, s.ID)
		t := r.Get(s.Tool)
		switch {
		case s.Tool == WorkflowTool:
			return nil, fmt.Errorf("%s: a workflow cannot run another workflow; put its steps in this one.", name)
		case t == nil:
			return nil, fmt.Errorf("%s: there is no tool named %q.", name, s.Tool)
		case !t.IsWrite:
			return nil, fmt.Errorf("%s: %s is a read. Do reads before proposing a workflow and put what they found in the steps.", name, s.Tool)
		case t.Outside != nil:
			return nil, fmt.Errorf("%s: %s runs outside the records transaction, so it cannot be a workflow step; propose it on its own.", name, s.Tool)
		case t.Write == nil:
			return nil, fmt.Errorf("%s: %s cannot run in a workflow.", name, s.Tool)
		}
		var input any
		dec := json.NewDecoder(bytes.NewReader(rawOr(s.Input)))
		dec.UseNumber()
		if err := dec.Decode(&input); err != nil {
			return nil, fmt.Errorf("%s: the input is not JSON: %v", name, err)
		}
		st := planStep{id: s.ID, tool: t, input: input}
		var walkErr error
		walkRefs(input, "", func(at, text string) {
			if walkErr != nil {
				return
			}
			ref, err := parseRef(at, text, s.ID, n, index, in.Steps[i+1:])
			if err != nil {
				walkErr = fmt.Errorf("%s, at input.%s: %v", name, at, err)
				return
			}
			st.refs = append(st.refs, ref)
		})
		if walkErr != nil {
			return nil, walkErr
		}
		placed := replaceRefs(input, func(text string) any { return p.placeholder(refFor(st.refs, text)) })
		if err := t.Validate(mustJSON(placed)); err != nil {
			return nil, fmt.Errorf("%s: the input for %s is not valid. %s", name, s.Tool, err)
		}
		index[s.ID] = i
		p.steps = append(p.steps, st)
	}
	return p, nil
}

// parseRef checks one ref of step n (its id self) against the steps before it.
func parseRef(at, text, self string, n int, before map[string]int, later []WorkflowStep) (stepRef, error) {
	parts := strings.Split(text, ".")
	if len(parts) < 2 || parts[0] == "" {
		return stepRef{}, fmt.Errorf(`$ref %q must be "<step id>.<path>", e.g. "tasks.created.0.id"`, text)
	}
	for _, seg := range parts[1:] {
		if seg == "" {
			return stepRef{}, fmt.Errorf("$ref %q has an empty part", text)
		}
	}
	id := parts[0]
	if id == self {
		return stepRef{}, fmt.Errorf("$ref %q points at its own step; a step can only use what earlier steps made", text)
	}
	i, ok := before[id]
	if !ok {
		for j, s := range later {
			if s.ID == id {
				return stepRef{}, fmt.Errorf("$ref %q points forward, at step %d; a step can only use what earlier steps made", text, n+1+j)
			}
		}
		return stepRef{}, fmt.Errorf("$ref %q names no step; the steps before this one are %s", text, stepList(before))
	}
	return stepRef{at: at, step: i, path: parts[1:], text: text}, nil
}

func stepList(index map[string]int) string {
	if len(index) == 0 {
		return "none"
	}
	ids := make([]string, len(index))
	for id, i := range index {
		ids[i] = strconv.Quote(id)
	}
	return strings.Join(ids, ", ")
}

func refFor(refs []stepRef, text string) stepRef {
	for _, r := range refs {
		if r.text == text {
			return r
		}
	}
	return stepRef{text: text}
}

// refText reports whether v is a ref, {"$ref": "<text>"} and nothing else, and its text.
func refText(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return "", false
	}
	s, ok := m["$ref"].(string)
	return s, ok
}

// walkRefs calls fn with the place and text of every ref in v.
func walkRefs(v any, at string, fn func(at, text string)) {
	if text, ok := refText(v); ok {
		fn(at, text)
		return
	}
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			walkRefs(x[k], join(k), fn)
		}
	case []any:
		for i, e := range x {
			walkRefs(e, join(strconv.Itoa(i)), fn)
		}
	}
}

// replaceRefs returns a copy of v with every ref replaced by with(its text).
func replaceRefs(v any, with func(text string) any) any {
	if text, ok := refText(v); ok {
		return with(text)
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = replaceRefs(e, with)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = replaceRefs(e, with)
		}
		return out
	}
	return v
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // decoded JSON always encodes
	}
	return b
}

// placeholder is what a ref reads as before its step has run: "(the project made in step 1)",
// "(the name of the project made in step 1)".
func (p *plan) placeholder(r stepRef) string {
	if len(p.steps) <= r.step || len(r.path) == 0 {
		return "(a value from an earlier step)"
	}
	noun := toolNoun(p.steps[r.step].tool.Name)
	field := r.path[len(r.path)-1]
	if field == "id" {
		return fmt.Sprintf("(the %s made in step %d)", noun, r.step+1)
	}
	return fmt.Sprintf("(the %s of the %s made in step %d)", field, noun, r.step+1)
}

// toolNoun is the kind of record a write tool makes or changes: hub_create_tasks → task.
func toolNoun(name string) string {
	_, rest, _ := strings.Cut(strings.TrimPrefix(name, "hub_"), "_")
	switch rest {
	case "":
		return "record"
	case "people":
		return "person"
	case "repo", "repos":
		return "repository"
	}
	return strings.TrimSuffix(rest, "s")
}

// humanTool says a tool's name as words: hub_update_project → "Update project".
func humanTool(name string) string {
	s := strings.ReplaceAll(strings.TrimPrefix(name, "hub_"), "_", " ")
	if s == "" {
		return name
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// preview lists each step's preview in order. A step with refs previews with placeholders; when
// its tool cannot preview that (it looks up a record that does not exist yet), the line says the
// tool and what each ref stands for.
func (p *plan) preview(ctx context.Context, tc *ToolContext) (string, error) {
	lines := []string{fmt.Sprintf("Workflow %s, %d steps under one Apply, all or nothing:", quoted(p.title), len(p.steps))}
	for i, st := range p.steps {
		placed := replaceRefs(st.input, func(text string) any { return p.placeholder(refFor(st.refs, text)) })
		line, err := previewStep(ctx, tc, st.tool, mustJSON(placed))
		if err != nil && len(st.refs) == 0 {
			return "", fmt.Errorf("Step %d (%q): %v", i+1, st.id, err)
		}
		if err != nil {
			var uses []string
			for _, r := range st.refs {
				uses = append(uses, fmt.Sprintf("%s: %s", r.at, p.placeholder(r)))
			}
			if m, ok := st.input.(map[string]any); ok { // and the plain values beside them
				for _, k := range slices.Sorted(maps.Keys(m)) {
					switch v := m[k].(type) {
					case string:
						uses = append(uses, fmt.Sprintf("%s: %s", k, quoted(clip(v, 80))))
					case json.Number, bool:
						uses = append(uses, fmt.Sprintf("%s: %v", k, v))
					}
				}
			}
			line = fmt.Sprintf("%s with %s.", humanTool(st.tool.Name), strings.Join(uses, "; "))
		}
		lines = append(lines, fmt.Sprintf("%d. %s", i+1, line))
	}
	return strings.Join(lines, "\n"), nil
}

// previewStep is one step's preview, from its input as prepared now: a step that names a record
// by title previews the record it will change.
func previewStep(ctx context.Context, tc *ToolContext, t *Tool, input json.RawMessage) (string, error) {
	input, err := t.Prepared(ctx, tc, input)
	if err != nil {
		return "", err
	}
	return t.Preview(ctx, tc, input)
}

// stepError is a workflow step that failed when applied; its transaction, and so every step, was
// rolled back.
type stepError struct {
	n, total int
	id, tool string
	err      error
}

func (e *stepError) Error() string {
	msg := Clause(e.err.Error())
	var after []string
	if e.n > 1 {
		after = append(after, fmt.Sprintf("%s rolled back with it", stepRange(1, e.n-1)))
	}
	if e.n < e.total {
		after = append(after, fmt.Sprintf("%s not run", stepRange(e.n+1, e.total)))
	}
	s := fmt.Sprintf("Step %d of %d (%q, %s) failed: %s. Nothing in the workflow was applied", e.n, e.total, e.id, e.tool, msg)
	if len(after) > 0 {
		s += ": " + strings.Join(after, ", and ")
	}
	return s + "."
}

func (e *stepError) Unwrap() error { return e.err }

// FailedStep is the step (from 1) whose failure err reports, with that step's own error, when err
// is a workflow's failure.
func FailedStep(err error) (n int, cause error, ok bool) {
	var se *stepError
	if !errors.As(err, &se) {
		return 0, nil, false
	}
	return se.n, se.err, true
}

func stepRange(from, to int) string {
	if from == to {
		return fmt.Sprintf("step %d was", from)
	}
	return fmt.Sprintf("steps %d–%d were", from, to)
}

// StepReceipt is one applied step in a workflow's result data.
type StepReceipt struct {
	ID      string `json:"id"`
	Tool    string `json:"tool"`
	Summary string `json:"summary"`
	Data    any    `json:"data,omitempty"`
}

// run makes every step inside b, in order, resolving refs from the results of the steps before.
// The first step that fails fails the whole batch.
func (p *plan) run(ctx context.Context, tc *ToolContext, b *records.Batch) (Result, error) {
	done := make([]any, len(p.steps)) // each step's result data, decoded
	var receipts []StepReceipt
	var lines []string
	var refs []Ref
	seen := map[Ref]bool{}
	inTx := *tc
	inTx.Records = b.Reads()
	tc = &inTx
	for i, st := range p.steps {
		fail := func(err error) (Result, error) {
			return Result{}, &stepError{n: i + 1, total: len(p.steps), id: st.id, tool: st.tool.Name, err: err}
		}
		var bad error
		input := replaceRefs(st.input, func(text string) any {
			r := refFor(st.refs, text)
			v, err := lookupPath(done[r.step], r.path)
			if err != nil && bad == nil {
				bad = fmt.Errorf("at input.%s, $ref %q found nothing in step %d's result: %v", r.at, text, r.step+1, err)
			}
			return v
		})
		if bad != nil {
			return fail(bad)
		}
		raw := mustJSON(input)
		if err := st.tool.Validate(raw); err != nil {
			return fail(fmt.Errorf("the input for %s is not valid once its refs are filled in: %s", st.tool.Name, lowerFirst(Clause(err.Error()))))
		}
		// Prepared now, inside the batch, so a step resolves what earlier steps made.
		raw, err := st.tool.Prepared(ctx, tc, raw)
		if err != nil {
			return fail(err)
		}
		res, err := st.tool.Write(ctx, tc, b, raw)
		if err != nil {
			return fail(err)
		}
		var data any
		if res.Data != nil {
			dec := json.NewDecoder(bytes.NewReader(mustJSON(res.Data)))
			dec.UseNumber()
			if err := dec.Decode(&data); err != nil {
				return fail(err)
			}
		}
		done[i] = data
		receipts = append(receipts, StepReceipt{ID: st.id, Tool: st.tool.Name, Summary: res.Summary, Data: data})
		lines = append(lines, fmt.Sprintf("%d. %s", i+1, res.Summary))
		for _, r := range res.Refs {
			if !seen[r] {
				seen[r] = true
				refs = append(refs, r)
			}
		}
	}
	summary := fmt.Sprintf("Ran workflow %s (%d steps):\n%s", quoted(p.title), len(p.steps), strings.Join(lines, "\n"))
	return Result{Summary: summary, Data: map[string]any{"steps": receipts}, Refs: refs}, nil
}

// lookupPath follows path through decoded JSON: object keys, and array indexes from 0.
func lookupPath(v any, path []string) (any, error) {
	for i, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[seg]
			if !ok {
				return nil, fmt.Errorf("no %q at %s", seg, pathAt(path[:i]))
			}
			v = next
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(x) {
				return nil, fmt.Errorf("no item %q at %s (it has %d)", seg, pathAt(path[:i]), len(x))
			}
			v = x[n]
		default:
			return nil, fmt.Errorf("nothing inside %s", pathAt(path[:i]))
		}
	}
	return v, nil
}

func pathAt(path []string) string {
	if len(path) == 0 {
		return "the top"
	}
	return strings.Join(path, ".")
}
